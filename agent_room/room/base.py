"""What the room's sub-services use of ``Room``, as a protocol.

``Checkpoints``, ``Entities``, ``Links``, ``Memory``, ``Roster`` and the memory settings
are handed the room they work in; they type it with ``RoomBase`` instead of importing
``room.service``, so that the room imports its sub-services (when a method needs one)
and never the reverse. ``Room`` satisfies it as it is, and so does the turn path's
``RoomCore`` (what ``who`` opens: it loads nothing of the memory); a test may hand in
anything else that does. The memory and the checkpoints need ``MemoryRoom``, which also
reads transcripts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from agent_room.core.ports import Clock
from agent_room.turn.store.sqlite import SqliteStore

if TYPE_CHECKING:  # a type only: the store declares it for the checker alone
    from agent_room.turn.store.sqlite_base import Row


class RoomBase(Protocol):
    """The room as its sub-services see it: its store, its clock and its checks."""

    store: SqliteStore
    clock: Clock
    body_limit: int

    def require_member(self, name: str) -> Row:
        """The session holding ``name``; ``UnknownName`` naming who is in the room if none."""
        ...

    def check_pair(self, sender: str, recipient: str) -> tuple[str, str]:
        """Sender and recipient checked as parties of a message between them."""
        ...

    def silent_hosts(self, now: float) -> set[str]:
        """Hosts whose watcher has gone silent (none on SQLite)."""
        ...


class MemoryRoom(RoomBase, Protocol):
    """The room as its memory and checkpoints see it: a checkpoint reads the session's
    transcript into the memory first (``Room.follow_transcript``)."""

    def follow_transcript(self, session_id: str, path: str) -> int:
        """Read what was appended to a session's transcript into the room's memory."""
        ...
