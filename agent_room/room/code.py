"""``CodeTracker``: every agent's changes and who touches what, re-read when turns end.

The console's changes view and the notifier both need each agent's changed files, and
the overlaps between agents before anyone merges. Reading them runs git for every agent,
so it is not done on every room change nor on a timer: an agent's changes are read again
only when its session moved (its Stop hook made it idle, it ended, it started), and a
merge dry run between two branches only when one of their commits moved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agent_room.core.overlaps import (
    AgentCode,
    CodeSnapshot,
    Overlap,
    conflict_candidates,
    same_file_overlaps,
    shared_checkouts,
)
from agent_room.core.worktrees import Changes, CodePreview, Git, MergeCheck, Worktree
from agent_room.room.service import Room
from agent_room.room.worktrees import Worktrees
from agent_room.store import worktrees as store_worktrees
from agent_room.turn.core.errors import RoomError

DRY_RUNS = 24
"""New merge dry runs (and working-tree commits) at most per pass: n agents changing
one file make n(n-1)/2 pairs, so a pass stays short and the rest follow in the next
passes, which the caller makes at once while ``pending``."""


@dataclass(frozen=True, slots=True)
class _Seen:
    """What an agent's changes were read at: read again when any of it moves."""

    state: str
    updated_at: float
    folder: str


class CodeTracker:
    """Reads the room's code; owned by one thread (the console's code worker, or the
    notifier's), not thread-safe."""

    def __init__(self, room: Room, git: Git) -> None:
        self.worktrees = Worktrees(room, git)
        self.store = room.store
        self.git = git
        self._seen: dict[str, _Seen] = {}
        self._changes: dict[str, Changes] = {}
        self._merges: dict[tuple[str, str, str], MergeCheck] = {}
        self._tops: dict[str, str | None] = {}
        self._preview_cache: dict[int, tuple[int, CodePreview | None]] = {}
        self._snapshots: dict[str, tuple[_Seen | None, str | None]] = {}
        """Per agent with uncommitted files, the commit of its working tree and the
        session moment it was made at."""
        self.reads = 0
        """How many agents' changes were read from git (for the tests and the bench)."""
        self.pending = False
        """Pairs were left for the next pass (``DRY_RUNS``): call ``refresh`` again."""
        self._last: (
            tuple[
                tuple[dict[str, _Seen], dict[str, Worktree]],
                tuple[tuple[Changes, ...], tuple[Overlap, ...]],
            ]
            | None
        ) = None
        """What the last pass found the sessions and worktrees at, and what it made of
        them: a pass that finds them the same reads nothing again (most changes to the
        room are messages, not turns)."""
        self._retry = False
        """A merge dry run failed in the last pass: the next one tries it again."""

    def _top(self, folder: str) -> str | None:
        if folder not in self._tops:
            try:
                self._tops[folder] = self.git.toplevel(folder)
            except RoomError:
                self._tops[folder] = None
        return self._tops[folder]

    def refresh(self, *, previews: bool = True) -> CodeSnapshot:
        """The room's code now, reading again only the agents whose turn moved on (and,
        with ``previews``, the pending handovers' code)."""
        trees = store_worktrees.live(self.store)
        wanted: dict[str, _Seen] = {}
        for name, (state, updated_at, cwd) in store_worktrees.member_folders(self.store).items():
            if state == "ended" and name not in trees:
                continue
            folder = trees[name].path if name in trees else cwd
            wanted[name] = _Seen(state, updated_at, folder)
        for name, worktree in trees.items():
            wanted.setdefault(name, _Seen("ended", worktree.created_at, worktree.path))
        if self._last is not None and not self.pending and (wanted, trees) == self._last[0]:
            # no session moved and no worktree came or went: nothing to read again
            agents, overlaps = self._last[1]
            return CodeSnapshot(agents, overlaps, self._previews() if previews else ())
        plain = [
            (n, top)
            for n, seen in wanted.items()
            if n not in trees and (top := self._top(seen.folder)) is not None
        ]
        sharing = shared_checkouts(plain)
        plain_names = {n for n, _ in plain}
        for name in list(self._changes):
            if name not in wanted:
                del self._changes[name]
                self._seen.pop(name, None)
        for name, seen in wanted.items():
            if name not in trees and name not in plain_names:
                continue  # not in a repository
            before = self._seen.get(name)
            busy = seen.state == "busy" and name in self._changes
            if before == seen or busy:  # a busy agent is read when its turn ends
                if name in sharing and name in self._changes:
                    self._changes[name] = _shared(self._changes[name], sharing[name])
                continue
            self._seen[name] = seen
            try:
                self._changes[name] = self.worktrees.changes(name, shared=sharing)
                self.reads += 1
            except RoomError as exc:
                self._changes[name] = Changes(name, seen.folder, "", problem=str(exc))
        agents = tuple(self._changes[n] for n in sorted(self._changes))
        self._last = None
        overlaps = tuple(self._overlaps(agents, trees))
        if not self._retry:
            self._last = ((wanted, trees), (agents, overlaps))
        return CodeSnapshot(
            agents=agents, overlaps=overlaps, previews=self._previews() if previews else ()
        )

    def _previews(self) -> tuple[tuple[int, CodePreview], ...]:
        """The pending handovers' code previews, made again when any agent's code was
        read again (a commit may have moved) or a handover is new."""
        found: list[tuple[int, CodePreview]] = []
        pending = self.store.pending_handovers()
        for row in pending:
            hid = int(row["message_id"])
            known = self._preview_cache.get(hid)
            if known is None or known[0] != self.reads:
                try:
                    preview = self.worktrees.preview(row)
                except RoomError:
                    preview = None
                self._preview_cache[hid] = known = (self.reads, preview)
            if known[1] is not None:
                found.append((hid, known[1]))
        live = {int(r["message_id"]) for r in pending}
        for hid in [h for h in self._preview_cache if h not in live]:
            del self._preview_cache[hid]
        return tuple(found)

    def _overlaps(self, agents: tuple[Changes, ...], trees: dict[str, Worktree]) -> list[Overlap]:
        code = [
            AgentCode(
                name=c.name,
                checkout=trees[c.name].repo if c.name in trees else c.checkout,
                files=frozenset(f.path for f in c.files),
                branch=c.state.branch if c.state else None,
                head=c.state.head if c.state else None,
                worktree=c.worktree,
                dirty=bool(c.state and c.state.dirty),
            )
            for c in agents
            if not c.problem
        ]
        found = same_file_overlaps(code)
        by_name = {c.name: c for c in agents}
        runs = 0
        self.pending = False
        failed = False
        for first, second in conflict_candidates(code):
            if runs >= DRY_RUNS:  # many agents on one file: the rest at the next pass
                self.pending = True
                break
            tips = (self._tip(by_name[first.name]), self._tip(by_name[second.name]))
            if None in tips or tips[0] == tips[1]:
                continue
            key = (first.checkout, str(tips[0]), str(tips[1]))
            if key not in self._merges:
                runs += 1
                try:
                    self._merges[key] = self.git.merge_check(*key)
                except RoomError:
                    failed = True  # tried again at the next pass
                    continue
            check = self._merges[key]
            if not check.clean:
                found.append(Overlap(first.name, second.name, check.conflicts, "conflict"))
        self._retry = failed
        return found

    def _tip(self, changes: Changes) -> str | None:
        """What the agent's work is now: its commit, or, with files not committed, a
        commit of its working tree (made once per turn: objects only, no ref)."""
        state = changes.state
        if state is None or not state.dirty:
            return state.head if state else None
        seen = self._seen.get(changes.name)
        known = self._snapshots.get(changes.name)
        if known is None or known[0] != seen:
            try:
                known = (seen, self.git.snapshot(changes.checkout))
            except RoomError:
                known = (seen, None)
            self._snapshots[changes.name] = known
        return known[1]


def _shared(changes: Changes, shared: tuple[str, ...]) -> Changes:
    return changes if changes.shared_with == shared else replace(changes, shared_with=shared)
