"""``RoomSnapshot``: everything the console shows, as one frozen value per change.

The console never reads the store from its event loop: a reader thread builds one
snapshot, posts it, and the app swaps it in whole. Frozen and comparable, so an unchanged
room posts nothing and a widget redraws only when its part differs. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agent_room.core.enums import SessionState

LIVE_STATES = frozenset({SessionState.IDLE, SessionState.BUSY, SessionState.WAITING})


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session as the console lists it."""

    name: str
    session_id: str | None
    agent: str
    state: str
    cwd: str | None
    pane: str | None
    tmux_socket: str | None
    pid: int | None
    started_at: float
    unread: int = 0
    failed: int = 0
    """Unread messages whose delivery failed."""
    note: str = ""
    """Why the deliverer holds this session's messages, if it does."""
    parent: str | None = None
    """The parent's session id."""
    depth: int = 0
    links: str = ""
    """The session's live links in a few words (``core.links.links_summary``)."""
    unanchored: bool = False
    """In a link without a pending anchor timer (the anchoring rule)."""
    needs_operator: str = ""
    """Why this agent waits for the operator (a handover, a permission dialog, failed
    deliveries), in a few words; empty when it does not."""
    clash: str = ""
    """A file this agent and another live one both changed lately (the room warned both)."""
    outside: bool = False
    """A Claude Code session outside the room (from the client's own registry)."""
    host: str | None = None
    """The machine it runs on, in a room across machines (else ``None``)."""
    cost: float | None = None
    """What it spent today (since midnight UTC); None when nothing was read of it."""
    cost_known: bool = True
    """Whether every request it made today had a price (else ``cost`` is a floor)."""
    over_budget: bool = False
    """A spent budget (its own or the room's) holds its prompts."""
    branch: str = ""
    """In a worktree of its own: its branch, ahead/behind its base, uncommitted files
    (``core.worktrees.BranchState.short``); read by the console's code worker."""

    @property
    def live(self) -> bool:
        """Whether the agent still runs (by its hooks and the liveness check)."""
        return self.state != SessionState.ENDED

    @property
    def delivery(self) -> str:
        """The delivery column: failures first, then why messages wait, then a file
        another agent changed too."""
        if self.failed:
            return f"{self.failed} failed"
        return self.note or self.clash


@dataclass(frozen=True, slots=True)
class TreeRow:
    """A node of the session tree; subagents are leaves with no session id."""

    label: str
    session_id: str | None
    state: str
    depth: int
    kind: str = "session"
    children: tuple[TreeRow, ...] = ()
    branch: str = ""
    """A session in a worktree of its own: its branch column (``SessionRow.branch``)."""


@dataclass(frozen=True, slots=True)
class HandoverRow:
    """A handover waiting for the operator."""

    id: int
    sender: str
    recipient: str
    body: str
    requested_at: float
    cycle: tuple[str, ...] | None = None
    """The loop this handover would close (seed 002), for the warning badge."""
    context: str | None = None
    """The context prepared from the sender's transcript, which travels with it once
    approved; None until the memory worker has prepared it."""
    code: str = ""
    """The code it carries against the recipient's branch: its files and whether it
    merges cleanly (``core.worktrees.CodePreview``); empty when it carries none."""


@dataclass(frozen=True, slots=True)
class FlowEvent:
    """One line of the message flow: a message sent, delivered, read, failed or decided."""

    id: int
    at: float
    kind: str
    """``sent``, ``delivered``, ``read``, ``failed``, ``requested``, ``approved`` ..."""
    message_id: int | None
    message_kind: str
    sender: str
    recipient: str
    status: str
    """The message's delivery status now."""
    summary: str


@dataclass(frozen=True, slots=True)
class Edge:
    """Traffic from one name to another: how many messages went that way."""

    sender: str
    recipient: str
    count: int


@dataclass(frozen=True, slots=True)
class RoomSnapshot:
    """The room at one moment, as the console draws it."""

    taken_at: float
    home: str
    sessions: tuple[SessionRow, ...] = ()
    tree: tuple[TreeRow, ...] = ()
    handovers: tuple[HandoverRow, ...] = ()
    flow: tuple[FlowEvent, ...] = ()
    traffic: tuple[Edge, ...] = ()
    messages: int = 0
    """The newest message's id: how many messages the room has held."""
    operator_unread: int = 0
    """Messages agents wrote to ``@operator`` that the operator has not read."""
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    """Free-form facts for the status bar; not part of equality."""

    def same_content(self, other: RoomSnapshot | None) -> bool:
        """Equal but for the time it was taken: nothing to redraw."""
        return other is not None and replace(other, taken_at=self.taken_at) == self

    def session(self, name: str) -> SessionRow | None:
        """The session holding ``name``, if any."""
        for row in self.sessions:
            if row.name == name:
                return row
        return None

    def by_session_id(self, session_id: str) -> SessionRow | None:
        """The session with this id, if it holds a name."""
        for row in self.sessions:
            if row.session_id == session_id:
                return row
        return None

    @property
    def pending(self) -> int:
        """How many handovers wait for a decision."""
        return len(self.handovers)

    @property
    def in_dialog(self) -> int:
        """How many agents sit in a permission dialog."""
        return sum(1 for s in self.sessions if s.state == SessionState.WAITING)

    @property
    def failed(self) -> int:
        """Messages whose delivery failed, over every session."""
        return sum(s.failed for s in self.sessions)


def with_code(
    snapshot: RoomSnapshot,
    branches: dict[str, str],
    clashes: dict[str, str],
    previews: dict[int, str],
) -> RoomSnapshot:
    """The snapshot with what the code worker read merged in: each agent's branch, the
    code overlaps it is in (where the room has no clash of its own to show), and each
    pending handover's code preview. Unchanged rows stay the same objects."""
    if not (branches or clashes or previews):
        return snapshot
    sessions = tuple(
        replace(
            row,
            branch=branches.get(row.name, ""),
            clash=row.clash or clashes.get(row.name, ""),
        )
        if row.name in branches or row.name in clashes
        else row
        for row in snapshot.sessions
    )
    handovers = tuple(
        replace(h, code=previews[h.id]) if h.id in previews else h for h in snapshot.handovers
    )
    tree = _branched(snapshot.tree, branches) if branches else snapshot.tree
    return replace(snapshot, sessions=sessions, handovers=handovers, tree=tree)


def _branched(rows: tuple[TreeRow, ...], branches: dict[str, str]) -> tuple[TreeRow, ...]:
    """The tree with each session's branch on its node."""
    return tuple(
        replace(
            row,
            branch=branches.get(row.label, "") if row.kind == "session" else "",
            children=_branched(row.children, branches),
        )
        for row in rows
    )
