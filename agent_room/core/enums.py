"""The room's vocabularies, as string enums stored verbatim in the database.

Standard library only, so that the fast read paths can use them. The hooks, which run on
every turn, use the plain strings these are made of (``core.states``) and load no ``enum``.
"""

from __future__ import annotations

from enum import StrEnum

from agent_room.turn.core import states


class MessageKind(StrEnum):
    """What a message is for."""

    CHAT = "chat"
    """A directed ``@name`` message between agents."""
    HANDOVER = "handover"
    """Work handed to another agent; held until the operator approves it."""
    LINK = "link"
    """A turn's output crossing a bidirectional link."""
    SYSTEM = "system"
    """Written by the room itself: decisions, notices, timers."""
    ASK = "ask"
    """A question put to a headless agent in another repository (``agent-room ask``)."""
    ANSWER = "answer"
    """That agent's answer, back to whoever asked."""
    NATIVE = "native"
    """Sent by one Claude Code session to another with the client's own SendMessage
    tool, seen arriving by the recipient's hook (recorded, never delivered by the room)."""


class DeliveryStatus(StrEnum):
    """Where a message is on its way to the recipient."""

    HELD = "held"
    """A handover waiting for the operator; not in any inbox yet."""
    QUEUED = "queued"
    """Waiting for delivery."""
    DELIVERED = "delivered"
    """Receipted by the recipient's hook."""
    READ = "read"
    """Read through ``inbox``."""
    FAILED = "failed"
    """Delivery gave up; the message stays in the inbox."""
    CANCELLED = "cancelled"
    """A rejected or expired handover: it never reaches the recipient."""


class SessionState(StrEnum):
    """What an agent session is doing, as told by its hooks."""

    IDLE = states.IDLE
    BUSY = states.BUSY
    WAITING = states.WAITING
    """A permission dialog is open: nothing may be typed into the pane."""
    ENDED = states.ENDED


class HandoverState(StrEnum):
    """The life of a handover; see ``core.handover`` for the allowed transitions."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
