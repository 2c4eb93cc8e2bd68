"""``Worktrees``: each agent on a branch of its own, and the code its handovers carry.

The use cases of issue 29 over the ``Git`` port: make (or reuse) an agent's worktree
for ``start --worktree``, tell its branch's state, remove it only when nothing would be
lost, read what an agent changed (``diff``), record the code a handover carries, preview
it against the recipient's branch, and tell the recipient how to take it on approval.
Every method runs git, which blocks: the console calls them from workers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from agent_room.adapters.git import GitCli
from agent_room.core.tree import TreeNode
from agent_room.core.worktrees import (
    WORKTREES_DIR,
    BranchState,
    Changes,
    CodePreview,
    CodeRef,
    FileChange,
    Git,
    Worktree,
    check_branch_name,
    plural,
    take_instructions,
)
from agent_room.store import worktrees as store_worktrees
from agent_room.turn.core.errors import BadInput, NotFound, Refused, RoomError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agent_room.room.base import RoomBase
    from agent_room.room.service import Room


_T = TypeVar("_T")
_R = TypeVar("_R")

STATE_READERS = 4
"""Worktrees whose state ``who`` reads at once."""


class Worktrees:
    """The room's worktrees and the code agents change, for one room and one git."""

    def __init__(self, room: RoomBase, git: Git) -> None:
        self.room = room
        self.store = room.store
        self.git = git

    # -- an agent's own worktree ------------------------------------------------------

    def main_checkout(self, cwd: str) -> str:
        """The repository's main checkout for ``cwd`` (which may be any of its worktrees):
        where ``.worktrees/`` lives."""
        top = self.git.toplevel(cwd)
        if top is None:
            raise BadInput(f"--worktree needs --cwd in a git repository: {cwd} is not in one")
        common = self.git.common_dir(top)
        if common is not None and Path(common).name == ".git":
            return str(Path(common).parent)
        return top

    def make(self, name: str, cwd: str, branch: str | None) -> tuple[Worktree, bool]:
        """The agent's worktree, made on ``branch`` (default: its name) from the commit
        checked out at ``cwd``; one it already has is reused. Return it and whether it
        was reused."""
        existing = store_worktrees.of(self.store, name)
        if existing is not None and Path(existing.path).is_dir():
            if branch and branch != existing.branch:
                raise Refused(
                    f"@{name} already works in {existing.path} on branch {existing.branch}:"
                    f" start it without a branch, or remove that worktree first"
                    f" (agent-room stop {name} --remove-worktree)"
                )
            return existing, True
        branch = check_branch_name(branch or name)
        repo = self.main_checkout(cwd)
        base_branch, base_commit = self.git.head(cwd)
        if base_commit is None:
            raise BadInput(f"{repo} has no commit yet: commit something to branch from")
        path = str(Path(repo) / WORKTREES_DIR / name)
        if Path(path).exists():
            raise Refused(f"{path} already exists and is not @{name}'s worktree: move it away")
        new = not self.git.branch_exists(repo, branch)
        self.git.add_worktree(repo, path, branch, base_commit, new=new)
        worktree = Worktree(
            name=name,
            repo=repo,
            path=path,
            branch=branch,
            base_branch=base_branch if base_branch != branch else None,
            base_commit=base_commit,
            created_at=self.room.clock(),
        )
        store_worktrees.record(self.store, worktree)
        return worktree, False

    def of(self, name: str) -> Worktree | None:
        """The agent's worktree, if it has one."""
        return store_worktrees.of(self.store, name)

    def state(self, worktree: Worktree) -> BranchState | None:
        """Its branch, ahead/behind its base and uncommitted files; None if it is gone."""
        if not Path(worktree.path).is_dir():
            return None
        return self.git.branch_state(worktree.path, self._base(worktree))

    def _base(self, worktree: Worktree) -> str:
        """The base branch while it exists, else the commit the branch started from."""
        if worktree.base_branch and self.git.branch_exists(worktree.repo, worktree.base_branch):
            return worktree.base_branch
        return worktree.base_commit

    def states(self) -> dict[str, BranchState | None]:
        """Every worktree's state, by agent (for ``who`` and ``tree``); a few at once,
        since each is git processes that mostly wait on the disk."""
        trees = store_worktrees.live(self.store)
        states = _at_once(self.state, list(trees.values()), STATE_READERS)
        return dict(zip(trees, states, strict=True))

    def removable(self, name: str, *, force: bool) -> Worktree:
        """The agent's worktree, refused while it holds work not merged anywhere
        (commits no other branch, tag or remote reaches; uncommitted files) unless
        ``force``: ``stop --remove-worktree`` asks before it stops anything."""
        worktree = store_worktrees.of(self.store, name)
        if worktree is None:
            raise NotFound(f"@{name} has no worktree")
        if force or not Path(worktree.path).is_dir():
            return worktree
        state = self.state(worktree)
        dirty = state.dirty if state else 0
        unmerged = self.git.unmerged(worktree.repo, worktree.branch)
        held = []
        if unmerged:
            held.append(f"{plural(unmerged, 'commit')} on {worktree.branch} no other has")
        if dirty:
            held.append(f"{plural(dirty, 'file')} not committed")
        if held:
            raise Refused(
                f"@{name}'s worktree {worktree.path} holds work not merged anywhere"
                f" ({', '.join(held)}): merge or commit it, or pass --force to lose it"
            )
        return worktree

    def remove(self, name: str, *, force: bool) -> str:
        """Remove the agent's worktree (its branch stays), as ``removable`` allows.
        Return what was done, in one line."""
        worktree = self.removable(name, force=force)
        if not Path(worktree.path).is_dir():
            store_worktrees.removed(self.store, name, at=self.room.clock())
            return f"worktree {worktree.path} was already gone"
        self.git.remove_worktree(worktree.repo, worktree.path, force=force)
        store_worktrees.removed(self.store, name, at=self.room.clock())
        return f"removed worktree {worktree.path} (branch {worktree.branch} kept)"

    # -- what an agent changed -------------------------------------------------------

    def _session(self, name: str) -> dict[str, Any] | None:
        return self.store.holder(name)

    def changes(self, name: str, *, shared: dict[str, tuple[str, ...]] | None = None) -> Changes:
        """What ``name`` changed: since its base in its worktree; in a plain checkout,
        the working tree's changes against ``HEAD``, which are everyone's there."""
        worktree = store_worktrees.of(self.store, name)
        if worktree is not None and Path(worktree.path).is_dir():
            base = worktree.base
            try:
                state, files = self.git.changes(worktree.path, base)
            except Refused:
                if base == worktree.base_commit:
                    raise
                base = worktree.base_commit  # the base branch is gone: its first commit
                state, files = self.git.changes(worktree.path, base)
            return Changes(name, worktree.path, base, files, worktree=True, state=state)
        session = self._session(name)
        if session is None and worktree is None:
            raise NotFound(f"no agent @{name} in the room")
        cwd = str((session or {}).get("cwd") or "")
        top = self.git.toplevel(cwd) if cwd else None
        if top is None:
            raise NotFound(f"@{name} does not work in a git repository ({cwd or 'no folder'})")
        others = shared.get(name, ()) if shared is not None else self._sharing(name, top)
        state, files = self.git.changes(top, "HEAD")
        return Changes(name, top, "HEAD", files, shared_with=others, state=state)

    def _sharing(self, name: str, top: str) -> tuple[str, ...]:
        """The other live agents without a worktree whose folder is in the checkout
        ``top`` (by path: no git run per agent)."""
        trees = store_worktrees.live(self.store)
        return tuple(
            str(m["name"])
            for m in self.store.members()
            if m["cwd"]
            and m["state"] != "ended"
            and m["name"] not in trees
            and m["name"] != name
            and Path(str(m["cwd"])).is_relative_to(top)
        )

    def patch(self, changes: Changes) -> str:
        """The whole patch of ``changes``: one diff of the tracked files, then each new
        untracked file as all added."""
        new = [f.path for f in changes.files if f.status == "?"]
        return self.git.patch(changes.checkout, changes.base, new)

    def file_diff(self, name: str, file: str) -> str:
        """One file's patch in ``name``'s changes."""
        changes = self.changes(name, shared={})
        if file not in {f.path for f in changes.files}:
            raise NotFound(f"@{name} did not change {file}")
        return self.git.file_diff(changes.checkout, changes.base, file)

    # -- the code a handover carries -------------------------------------------------

    def code_of(self, name: str) -> CodeRef | None:
        """The sender's branch and commit now (None outside a repository)."""
        worktree = store_worktrees.of(self.store, name)
        folder = worktree.path if worktree is not None else None
        if folder is None:
            session = self._session(name)
            folder = str(session["cwd"]) if session and session.get("cwd") else None
        if folder is None or not Path(folder).is_dir():
            return None
        top = self.git.toplevel(folder)
        if top is None:
            return None
        branch, commit = self.git.head(top)
        if commit is None:
            return None
        state = self.git.branch_state(top, commit)
        return CodeRef(branch=branch, commit=commit, checkout=top, uncommitted=state.dirty)

    def recipient_branch(self, recipient: str, repo_of_code: str) -> tuple[str | None, str]:
        """The recipient's branch in the code's repository, or why there is none."""
        worktree = store_worktrees.of(self.store, recipient)
        folder = worktree.path if worktree is not None else None
        if folder is None:
            session = self._session(recipient)
            folder = str(session["cwd"]) if session and session.get("cwd") else None
        if folder is None or not Path(folder).is_dir():
            return None, f"@{recipient}'s folder is not known here"
        if self.git.common_dir(folder) != repo_of_code:
            return None, f"@{recipient} works in another repository"
        branch, _ = self.git.head(folder)
        if branch is None:
            return None, f"@{recipient} is on a detached HEAD"
        return branch, ""

    def preview(self, handover: dict[str, Any]) -> CodePreview | None:
        """The handover's code against the recipient's branch: the files it brings and
        whether it merges cleanly there (a dry run); None when it carries no code."""
        fields = handover.get("fields") or {}
        if isinstance(fields, str):
            fields = json.loads(fields or "{}")
        code = CodeRef.from_fields(fields)
        if code is None:
            return None
        if not Path(code.checkout).is_dir():
            return CodePreview(code, None, problem=f"{code.checkout} is gone")
        repo = self.git.common_dir(code.checkout)
        target, problem = self.recipient_branch(str(handover["recipient"]), repo or "")
        try:
            if target is None:
                return CodePreview(code, None, problem=problem)
            files = self.git.commit_changes(code.checkout, target, code.commit)
            merge = self.git.merge_check(code.checkout, target, code.commit)
        except RoomError as exc:
            return CodePreview(code, target, problem=str(exc))
        return CodePreview(code, target, files=files, merge=merge)

    def prepare_approval(self, message_id: int) -> None:
        """Before a handover is approved, tell its body how to take the code it carries (the
        commit, and merge, rebase or cherry-pick); the approval never fails for want of
        the code's preview."""
        row = self.store.handover(message_id)
        if row is not None and row.get("state") == "pending":
            try:
                preview = self.preview(row)
            except RoomError as exc:
                preview = None
                self.store.logevent(
                    "handover.code", "room", at=self.room.clock(), subject=str(message_id),
                    data={"problem": str(exc)},
                )  # fmt: skip
            if preview is not None:
                text = take_instructions(message_id, str(row["sender"]), preview)
                store_worktrees.append_to_held(self.store, message_id, text)


def _at_once(work: Callable[[_T], _R], items: list[_T], threads: int) -> list[_R]:
    """``work`` over ``items`` on up to ``threads`` threads, the results in order; the
    first error is raised once all are done. (Threads of its own: concurrent.futures
    loads logging, a tenth of what ``who`` costs, and ``who`` rarely needs any.)"""
    done: dict[int, _R] = {}
    failed: list[BaseException] = []
    left = iter(range(len(items)))
    lock = threading.Lock()

    def run() -> None:
        while not failed:
            with lock:
                index = next(left, None)
            if index is None:
                return
            try:
                done[index] = work(items[index])
            except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
                failed.append(exc)

    started = [threading.Thread(target=run, daemon=True) for _ in range(min(threads, len(items)))]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    if failed:
        raise failed[0]
    return [done[index] for index in range(len(items))]


# -- who / tree: the branch of each agent in a worktree ------------------------------


def branch_cells(room: RoomBase, names: Sequence[str]) -> list[str] | None:
    """The ``BRANCH`` column of ``who`` (``NAME ↑ahead ↓behind ●dirty``), or None when
    nobody in the room has a worktree (the column is left out)."""
    trees = store_worktrees.live(room.store)
    if not trees or not set(names) & trees.keys():
        return None
    worktrees = Worktrees(room, GitCli())
    cells = []
    for name in names:
        state = worktrees.state(trees[name]) if name in trees else None
        cells.append(state.short() if state else ("(gone)" if name in trees else "-"))
    return cells


def branch_states(room: RoomBase) -> dict[str, BranchState | None]:
    """Every worktree's state by agent (``who --json``, ``tree``)."""
    if not store_worktrees.live(room.store):
        return {}
    return Worktrees(room, GitCli()).states()


def mark_branches(room: RoomBase, roots: list[TreeNode]) -> None:
    """Put each worktree agent's branch on its node of the session tree."""
    states = branch_states(room)
    if not states:
        return
    stack = list(roots)
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.kind == "session" and node.label in states:
            state = states[node.label]
            node.branch = state.short() if state else "(worktree gone)"


def _stat_line(change: FileChange) -> str:
    if change.binary:
        return f"{change.status} {change.path} (binary)"
    return f"{change.status} {change.path} +{change.added} -{change.removed}"


def stat_lines(changes: Changes) -> list[str]:
    """``diff --stat``'s lines: one per file, then the totals."""
    lines = [_stat_line(f) for f in changes.files]
    lines.append(
        f"{plural(len(changes.files), 'file')} changed, +{changes.added} -{changes.removed}"
    )
    return lines


def approve_with_code(room: Room, git: Git, message_id: int) -> int:
    """Approve a handover, its body first told how to take the code it carries."""
    Worktrees(room, git).prepare_approval(message_id)
    return room.approve(message_id)


def code_of(room: RoomBase, sender: str) -> CodeRef | None:
    """The sender's branch and commit for a handover (git's command line); a fault costs
    the record, never the handover (which says nothing of code then)."""
    try:
        return Worktrees(room, GitCli()).code_of(sender)
    except RoomError:
        return None
