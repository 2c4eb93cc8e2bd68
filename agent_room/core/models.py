"""The room's typed models (pydantic v2), shared by the room service, the console and tests.

Each model validates one row of the room's store, so the Python API and the console
get checked, immutable values; the hook and fast read paths work on the same rows with
the standard library and are cross-checked against these models by the tests.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, computed_field

from agent_room.core.enums import DeliveryStatus, HandoverState, MessageKind, SessionState
from agent_room.core.handover import check_transition
from agent_room.core.links import LinkState
from agent_room.turn.core.timers import Intent, TimerState


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    @classmethod
    def from_row(cls, row: Any) -> Self:
        """Validate a store row (any mapping of column to value)."""
        return cls.model_validate(dict(row))


class Session(_Frozen):
    """One agent session in the room, as the registry knows it."""

    name: str
    """The ``@name`` other agents address it by."""
    session_id: str | None = None
    """The agent's own session id; ``None`` for a name joined by hand."""
    agent: str = "claude"
    """Which kind of agent runs it: claude, codex, gemini, or a stand-in."""
    state: SessionState = SessionState.IDLE
    pane: str | None = None
    """The tmux pane id (``%N``) the agent runs in."""
    pid: int | None = None
    pid_start: int | None = None
    """The process's start time in clock ticks since boot: with ``pid`` its identity."""
    cwd: str | None = None
    transcript_path: str | None = None
    parent: str | None = None
    """The session id of the session this one descends from, if known."""
    depth: int = 0
    subagent: bool = False
    started_at: float
    updated_at: float
    ended_at: float | None = None
    unread: int = 0


class Message(_Frozen):
    """A directed message: never broadcast, always from one name to one name."""

    id: int
    kind: MessageKind
    sender: str
    recipient: str
    body: str
    created_at: float
    status: DeliveryStatus
    delivered_at: float | None = None
    read_at: float | None = None
    failure: str | None = None
    handover_state: HandoverState | None = None
    link_id: int | None = None
    via: str | None = None
    """How it was delivered: ``nudge`` (typed into the pane), ``native`` (Claude Code's
    messaging socket), ``stop`` (at a turn boundary) ..."""


class Handover(_Frozen):
    """The decision record of a handover message."""

    message_id: int
    state: HandoverState
    requested_at: float
    decided_at: float | None = None
    reason: str | None = None
    decided_by: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)

    def decide(
        self, target: HandoverState, *, at: float, by: str, reason: str | None = None
    ) -> Handover:
        """Return the handover moved to ``target``; raise ``Refused`` for a forbidden move."""
        check_transition(self.message_id, self.state, target)
        return self.model_copy(
            update={"state": target, "decided_at": at, "decided_by": by, "reason": reason}
        )


class AuditEvent(_Frozen):
    """One append-only entry of the room's audit log; the console's message flow."""

    id: int
    at: float
    kind: str
    """Dotted event kind, e.g. ``message.sent``, ``handover.approved``, ``session.state``."""
    actor: str
    """Who caused it: a name, ``operator`` or ``room``."""
    subject: str | None = None
    """What it is about: a name, or a session id."""
    message_id: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class LinkView(_Frozen):
    """A bidirectional link between two sessions, as ``links`` and the console show it."""

    id: int
    initiator: str
    """The name that opened the link: it owns the lifecycle and alone may close it."""
    responder: str
    initiator_session: str
    responder_session: str
    state: LinkState
    budget: int
    """Crossings allowed in all, set when the link opened; never reset."""
    crossings: int
    held: int = 0
    """Outputs held while the link is frozen; they cross on a thaw."""
    opened_at: float
    updated_at: float
    frozen_at: float | None = None
    freeze_reason: str | None = None
    closed_at: float | None = None
    close_reason: str | None = None
    closed_by: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def crossings_left(self) -> int:
        """What the turn budget still allows."""
        return max(0, self.budget - self.crossings)


class TimerView(_Frozen):
    """A timer with intent: when due, ``INTENT: TEXT`` reaches its agent."""

    id: int
    name: str
    session_id: str | None = None
    intent: Intent
    text: str
    created_at: float
    due_at: float
    state: TimerState
    fired_at: float | None = None
    """When it fired, or was cancelled."""
    message_id: int | None = None
