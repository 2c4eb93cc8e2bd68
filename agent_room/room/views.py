"""The room read as validated models (``core.models``): for the tools and the tests that
want types rather than rows. A module of its own because pydantic's models cost the
command line ~90 ms to load, and ``Room`` is what every command opens."""

from __future__ import annotations

from agent_room.core.models import AuditEvent, LinkView, Message, Session, TimerView
from agent_room.room.base import RoomBase
from agent_room.room.links import Links


def message_views(room: RoomBase, limit: int = 20) -> list[Message]:
    """The last ``limit`` messages of the room, oldest first."""
    return [Message.from_row(r) for r in room.store.history(limit)]


def session_views(room: RoomBase) -> list[Session]:
    """The sessions in the room."""
    return [Session.from_row(r) for r in room.store.members()]


def link_views(room: RoomBase, *, live_only: bool = False) -> list[LinkView]:
    """The room's links, newest first."""
    return [LinkView.from_row(r) for r in Links(room).links(live_only=live_only)]


def timer_views(room: RoomBase, *, pending_only: bool = True) -> list[TimerView]:
    """The room's timers."""
    return [TimerView.from_row(r) for r in Links(room).timers(pending_only=pending_only)]


def audit_events(room: RoomBase, *, after: int = 0, limit: int = 1000) -> list[AuditEvent]:
    """The audit log."""
    return [AuditEvent.from_row(r) for r in room.store.events(after=after, limit=limit)]
