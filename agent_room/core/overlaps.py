"""Who touches what: agents changing the same code before anyone merged.

Pure rules over what git said about each agent (``core.worktrees``): two agents of one
plain checkout that changed the same file; two agents in worktrees of one repository
whose work changes a file in common (the pairs worth a merge dry run); and the room's
code at one moment as the console shows it (``CodeSnapshot``). Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agent_room.core.worktrees import Changes, CodePreview


@dataclass(frozen=True, slots=True)
class Overlap:
    """Two agents touching the same code before anyone merged."""

    first: str
    second: str
    paths: tuple[str, ...]
    kind: str
    """``same-file``: two agents changed a file of one checkout; ``conflict``: their
    branches (worktrees) change the same lines, a merge would conflict."""

    @property
    def key(self) -> str:
        """Stable while the overlap lasts, for the notifier's de-duplication."""
        return f"code:{self.kind}:{self.first}:{self.second}:{','.join(self.paths)}"

    def text(self) -> str:
        """One line, naming both agents, the files, and what to do."""
        files = ", ".join(self.paths[:3]) + (" ..." if len(self.paths) > 3 else "")
        if self.kind == "conflict":
            return (
                f"@{self.first} and @{self.second} change the same lines of {files}:"
                f" merging their branches would conflict (agent-room diff {self.first})"
            )
        return (
            f"@{self.first} and @{self.second} both changed {files} in one checkout"
            f" (agent-room diff {self.first})"
        )


def overlap_facts(overlaps: Iterable[Overlap]) -> tuple[tuple[str, str, str], ...]:
    """The overlaps as the notifier's facts (``core.attention.RoomFacts.code``)."""
    return tuple((o.key, o.first, o.text()) for o in overlaps)


@dataclass(frozen=True, slots=True)
class AgentCode:
    """One agent's changed files, as the overlap rule needs them."""

    name: str
    checkout: str
    """The folder it works in (agents of the same plain checkout share its files); for
    an agent with a worktree, the repository's main checkout."""
    files: frozenset[str] = field(default_factory=frozenset)
    branch: str | None = None
    head: str | None = None
    worktree: bool = False
    dirty: bool = False
    """Files not committed: its work is more than its commit."""


def same_file_overlaps(agents: Sequence[AgentCode]) -> list[Overlap]:
    """Agents of one plain checkout that changed the same files: their edits are in one
    working tree, each sees the other's half-done work."""
    found: list[Overlap] = []
    plain = sorted((a for a in agents if not a.worktree), key=lambda a: a.name)
    for i, first in enumerate(plain):
        for second in plain[i + 1 :]:
            if first.checkout != second.checkout:
                continue
            shared = first.files & second.files
            if shared:
                found.append(Overlap(first.name, second.name, tuple(sorted(shared)), "same-file"))
    return found


def conflict_candidates(agents: Sequence[AgentCode]) -> list[tuple[AgentCode, AgentCode]]:
    """Pairs of worktree agents of one repository that change a file in common, committed
    or not: only these can conflict, so only these are worth a merge dry run (two clean
    checkouts of the same commit cannot)."""
    wt = sorted((a for a in agents if a.worktree and a.head), key=lambda a: a.name)
    return [
        (first, second)
        for i, first in enumerate(wt)
        for second in wt[i + 1 :]
        if first.checkout == second.checkout
        and first.files & second.files
        and (first.head != second.head or first.dirty or second.dirty)
    ]


def shared_checkouts(agents: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """Per agent, the others that work in the same folder (name, folder)."""
    by_folder: dict[str, list[str]] = {}
    pairs = list(agents)
    for name, folder in pairs:
        by_folder.setdefault(folder, []).append(name)
    return {name: tuple(n for n in by_folder[folder] if n != name) for name, folder in pairs}


@dataclass(frozen=True, slots=True)
class CodeSnapshot:
    """Every agent's changes and the overlaps between them, read when turns end."""

    agents: tuple[Changes, ...] = ()
    overlaps: tuple[Overlap, ...] = ()
    previews: tuple[tuple[int, CodePreview], ...] = ()
    """Each pending handover's code against its recipient's branch, by handover id."""

    def of(self, name: str) -> Changes | None:
        """The changes of ``name``, if read."""
        for changes in self.agents:
            if changes.name == name:
                return changes
        return None

    def branches(self) -> dict[str, str]:
        """Per agent with a worktree, its branch column (``BranchState.short``)."""
        return {c.name: c.state.short() for c in self.agents if c.worktree and c.state is not None}

    def clashes(self) -> dict[str, str]:
        """Per agent in an overlap, a few words for the console's delivery column."""
        found: dict[str, str] = {}
        for overlap in self.overlaps:
            path = overlap.paths[0].rsplit("/", 1)[-1] if overlap.paths else "?"
            verb = "conflicts with" if overlap.kind == "conflict" else "also changed by"
            found.setdefault(overlap.first, f"⚠ {path} {verb} @{overlap.second}")
            found.setdefault(overlap.second, f"⚠ {path} {verb} @{overlap.first}")
        return found

    def preview_texts(self) -> dict[int, str]:
        """Each handover's preview as the console's preview panel shows it."""
        return {hid: preview.text() for hid, preview in self.previews}

    def overlap_of(self, name: str) -> Overlap | None:
        """The first overlap ``name`` is in, if any."""
        for overlap in self.overlaps:
            if name in (overlap.first, overlap.second):
                return overlap
        return None
