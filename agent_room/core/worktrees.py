"""Worktrees and the code agents change: the plain data and the pure rules.

An agent started with ``--worktree`` works in a git worktree of its own, on a branch of
its own, from a base recorded when the worktree was made. This module holds what the room
knows about that (``Worktree``), what git says about a branch and its changes at one
moment (``BranchState``, ``FileChange``, ``Changes``), whether one commit merges into a
branch (``MergeCheck``), and the rules built on them: the branch column's few
characters, how a recipient takes a handover's work (who touches what is
``core.overlaps``). The outside world (git itself) sits behind the ``Git`` port;
standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_room.turn.core.errors import BadInput

WORKTREES_DIR = ".worktrees"
"""Where the room makes agents' worktrees: ``<repository>/.worktrees/NAME``, beside the
project as Claude Code (``.claude/worktrees``) and Gemini CLI (``.gemini/worktrees``)
keep theirs, and hidden from the main checkout by ``.git/info/exclude``."""


_BRANCH_BAD = (" ", "~", "^", ":", "?", "*", "[", "\\", "..", "@{", "//")


def check_branch_name(branch: str) -> str:
    """``branch`` if git would take it as a new branch's name (``git check-ref-format``'s
    rules, checked here so a bad name is refused before anything is made)."""
    bad = (
        not branch
        or not branch.isprintable()
        or branch.startswith(("-", "/", "."))
        or branch.endswith(("/", ".", ".lock"))
        or any(part in branch for part in _BRANCH_BAD)
        or branch == "HEAD"
    )
    if bad:
        raise BadInput(f"invalid branch name {branch!r}: use letters, digits, '-', '_', '/'")
    return branch


def plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True, slots=True)
class Worktree:
    """An agent's worktree, as the room recorded it when ``start --worktree`` made it."""

    name: str
    """The agent it belongs to."""
    repo: str
    """The main checkout of the repository (``--cwd``'s top level)."""
    path: str
    """The worktree's folder: the agent's working directory."""
    branch: str
    base_branch: str | None
    """The branch checked out at ``--cwd`` when the worktree was made (None: detached)."""
    base_commit: str
    """The commit the branch started from."""
    created_at: float
    removed_at: float | None = None

    @property
    def base(self) -> str:
        """What ahead/behind and the diff compare with: the base branch while it exists
        (its tip moves as others merge), else the commit the branch started from."""
        return self.base_branch or self.base_commit


@dataclass(frozen=True, slots=True)
class BranchState:
    """A checkout's branch at one moment: how far from its base, and what is uncommitted."""

    branch: str | None
    """None when the checkout is on a detached HEAD."""
    head: str | None
    """The commit checked out (None in a repository with no commit yet)."""
    ahead: int = 0
    """Commits on the branch that its base does not have."""
    behind: int = 0
    """Commits on the base that the branch does not have."""
    dirty: int = 0
    """Files changed and not committed, new untracked files included."""

    def short(self) -> str:
        """The branch column: ``NAME ↑2 ↓1 ●3`` (each mark only when it is not zero)."""
        marks = [self.branch or (self.head or "?")[:8]]
        if self.ahead:
            marks.append(f"↑{self.ahead}")
        if self.behind:
            marks.append(f"↓{self.behind}")
        if self.dirty:
            marks.append(f"●{self.dirty}")
        return " ".join(marks)

    def as_dict(self) -> dict[str, object]:
        """For ``--json``."""
        return {
            "branch": self.branch,
            "head": self.head,
            "ahead": self.ahead,
            "behind": self.behind,
            "dirty": self.dirty,
        }


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file changed since the base, committed or not."""

    path: str
    added: int
    removed: int
    status: str = "M"
    """``A`` added, ``D`` deleted, ``M`` modified, ``?`` new and not yet added to git."""
    binary: bool = False

    def as_dict(self) -> dict[str, object]:
        """For ``--json``."""
        return {
            "path": self.path,
            "added": self.added,
            "removed": self.removed,
            "status": self.status,
            "binary": self.binary,
        }


@dataclass(frozen=True, slots=True)
class Changes:
    """What one agent changed: every file, against what."""

    name: str
    checkout: str
    """The folder the agent works in."""
    base: str
    """What the files are compared with (a branch, a commit, or ``HEAD``)."""
    files: tuple[FileChange, ...] = ()
    worktree: bool = False
    """The agent has a worktree of its own; else it works in a plain checkout."""
    shared_with: tuple[str, ...] = ()
    """Other live agents working in the same checkout: its changes are theirs too."""
    state: BranchState | None = None
    """The checkout's branch when the changes were read."""
    problem: str = ""
    """Why the changes could not be read (git refused), in one line."""

    @property
    def added(self) -> int:
        """Lines added over every file."""
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        """Lines removed over every file."""
        return sum(f.removed for f in self.files)

    def as_dict(self) -> dict[str, object]:
        """For ``diff --json``."""
        return {
            "name": self.name,
            "checkout": self.checkout,
            "base": self.base,
            "worktree": self.worktree,
            "shared_with": list(self.shared_with),
            "branch": None if self.state is None else self.state.as_dict(),
            "problem": self.problem or None,
            "added": self.added,
            "removed": self.removed,
            "files": [f.as_dict() for f in self.files],
        }


@dataclass(frozen=True, slots=True)
class MergeCheck:
    """Whether a commit merges into a branch, found by a dry run (nothing written)."""

    clean: bool
    conflicts: tuple[str, ...] = ()
    """The files that would conflict."""


@dataclass(frozen=True, slots=True)
class CodeRef:
    """The code a handover carries: the sender's branch and commit when it was sent."""

    branch: str | None
    commit: str
    checkout: str
    """The sender's folder, to find the repository again."""
    uncommitted: int = 0
    """Files the sender had not committed: they do not travel with the commit."""

    def as_fields(self) -> dict[str, str]:
        """As the handover's stored fields (strings, beside seed 004's)."""
        return {
            "code_branch": self.branch or "",
            "code_commit": self.commit,
            "code_checkout": self.checkout,
            "code_uncommitted": str(self.uncommitted),
        }

    @classmethod
    def from_fields(cls, fields: Mapping[str, object]) -> CodeRef | None:
        """The code a handover's fields recorded, if any."""
        commit = str(fields.get("code_commit") or "")
        if not commit:
            return None
        uncommitted = str(fields.get("code_uncommitted") or "0")
        return cls(
            branch=str(fields.get("code_branch") or "") or None,
            commit=commit,
            checkout=str(fields.get("code_checkout") or ""),
            uncommitted=int(uncommitted) if uncommitted.isdigit() else 0,
        )


@dataclass(frozen=True, slots=True)
class CodePreview:
    """A handover's code as the operator reviews it before approving."""

    code: CodeRef
    target: str | None
    """The recipient's branch the work would go into (None: not known)."""
    files: tuple[FileChange, ...] = ()
    """What the commit brings that the recipient's branch lacks."""
    merge: MergeCheck | None = None
    """None when no dry run could be made (another repository, no branch)."""
    problem: str = ""
    """Why the preview is partial, in one line."""

    def summary(self) -> str:
        """One line for the queue and ``handovers``."""
        code = self.code
        where = f"{code.branch} @ {code.commit[:10]}" if code.branch else code.commit[:10]
        added = sum(f.added for f in self.files)
        removed = sum(f.removed for f in self.files)
        parts = [f"code: {where}", f"{plural(len(self.files), 'file')} +{added} -{removed}"]
        if self.merge is not None and self.target:
            parts.append(
                f"merges cleanly into {self.target}"
                if self.merge.clean
                else f"CONFLICTS with {self.target} in {', '.join(self.merge.conflicts[:3])}"
            )
        elif self.problem:
            parts.append(self.problem)
        if code.uncommitted:
            parts.append(f"{plural(code.uncommitted, 'uncommitted file')} left out")
        return "; ".join(parts)

    def text(self) -> str:
        """The summary, then one line per file (``handovers show``, the console)."""
        lines = [self.summary()]
        for change in self.files:
            stat = "(binary)" if change.binary else f"+{change.added} -{change.removed}"
            lines.append(f"  {change.path} {stat}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        """For ``handovers --json`` and ``handovers show --json``."""
        return {
            "branch": self.code.branch,
            "commit": self.code.commit,
            "checkout": self.code.checkout,
            "uncommitted": self.code.uncommitted,
            "target": self.target,
            "files": [f.as_dict() for f in self.files],
            "merges_cleanly": None if self.merge is None else self.merge.clean,
            "conflicts": [] if self.merge is None else list(self.merge.conflicts),
            "problem": self.problem or None,
            "summary": self.summary(),
        }


def take_instructions(handover_id: int, sender: str, preview: CodePreview) -> str:
    """What the recipient of an approved handover is told: exactly how to take the work.

    Merge is the default (it keeps both histories and the sender's commits as they are);
    a branch with nothing of its own fast-forwards; a conflict is named with its files so
    the recipient knows before starting what it will have to resolve. Rebase and
    cherry-pick are offered with the exact commits, for a recipient that keeps a linear
    history."""
    code = preview.code
    commit = code.commit
    branch = f" (branch {code.branch})" if code.branch else ""
    lines = [f"[agent-room] Handover #{handover_id} carries @{sender}'s code:"]
    lines[0] += f" commit {commit}{branch}."
    target = preview.target or "your branch"
    if preview.merge is None:
        why = f" ({preview.problem})" if preview.problem else ""
        lines.append(f"Take it into {target} with: git merge {commit}{why}")
    elif preview.merge.clean:
        lines.append(f"It merges cleanly into {target}. Take it with: git merge {commit}")
    else:
        files = ", ".join(preview.merge.conflicts)
        lines.append(
            f"Merging it into {target} conflicts in {files}: run git merge {commit},"
            " resolve those files, then git commit."
        )
    lines.append(
        f"Or replay your own commits on top of it: git rebase {commit};"
        f" or take only its commits: git cherry-pick {target_range(commit)}."
    )
    if code.uncommitted:
        lines.append(
            f"@{sender} had {plural(code.uncommitted, 'file')} not committed when it handed over:"
            f" they are not in that commit (ask @{sender} to commit them)."
        )
    return "\n".join(lines)


def target_range(commit: str) -> str:
    """The commits a cherry-pick takes: those of ``commit`` that ``HEAD`` lacks."""
    return f"HEAD..{commit}"


class Git(Protocol):
    """Git, as the room needs it. Every call blocks: run it in a worker, never on the
    console's event loop."""

    def toplevel(self, path: str) -> str | None:
        """The top folder of the checkout ``path`` is in; None outside a repository."""
        ...

    def common_dir(self, path: str) -> str | None:
        """The repository's shared git folder: the same for all of its worktrees."""
        ...

    def head(self, path: str) -> tuple[str | None, str | None]:
        """The checkout's (branch, commit); branch None on a detached HEAD."""
        ...

    def add_worktree(self, repo: str, path: str, branch: str, start: str, *, new: bool) -> None:
        """Make a worktree at ``path`` on ``branch`` (made from ``start`` when ``new``)."""
        ...

    def remove_worktree(self, repo: str, path: str, *, force: bool) -> None:
        """Remove the worktree at ``path`` (its branch stays)."""
        ...

    def branch_exists(self, repo: str, branch: str) -> bool:
        """Whether ``refs/heads/BRANCH`` exists."""
        ...

    def branch_state(self, path: str, base: str) -> BranchState:
        """The checkout's branch, how far from ``base``, and what is uncommitted."""
        ...

    def changes(self, path: str, base: str) -> tuple[BranchState, tuple[FileChange, ...]]:
        """The branch's state, and the files changed since the merge base of ``base`` and
        HEAD, committed or not, new untracked files included."""
        ...

    def patch(self, path: str, base: str, untracked: Sequence[str]) -> str:
        """The patch since the merge base of ``base`` and HEAD, then ``untracked`` files
        as all added."""
        ...

    def file_diff(self, path: str, base: str, file: str) -> str:
        """One file's patch since the merge base of ``base`` and HEAD (untracked: whole)."""
        ...

    def commit_changes(self, repo: str, target: str, commit: str) -> tuple[FileChange, ...]:
        """What ``commit`` brings that ``target`` lacks (three-dot: since their merge base)."""
        ...

    def snapshot(self, path: str) -> str | None:
        """A commit of the checkout as it is, uncommitted and new files included, that
        no ref names (for a merge dry run); None without a first commit."""
        ...

    def merge_check(self, repo: str, target: str, commit: str) -> MergeCheck:
        """Whether ``commit`` merges into ``target`` (a dry run that writes no ref)."""
        ...

    def unmerged(self, repo: str, branch: str) -> int:
        """Commits of ``branch`` that no other branch, tag or remote reaches."""
        ...
