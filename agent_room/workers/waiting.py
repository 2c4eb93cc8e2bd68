"""``waiting_for``: what waits for one recipient, as the deliverer weighs it.

Both of the deliverer's ways to a recipient (its pane, ``workers.deliverer``; its
client's socket, ``workers.native``) decide from the same facts: the messages queued
for it, those that failed and may be nudged again, who sent each, and the nudge still
open, if its messages were not receipted meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from agent_room.core.delivery import Failed
from agent_room.turn.store.delivery import answered
from agent_room.turn.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows


class Waiting(NamedTuple):
    """What waits for one recipient."""

    queued: list[int]
    """The messages queued for it, oldest first."""
    failed: list[Failed]
    """Its failed messages that may still be nudged again."""
    senders: dict[int, str]
    """Who sent each of them."""
    nudge: Row | None
    """The nudge open for it, unless its messages were receipted meanwhile (then closed)."""


def waiting_for(store: SqliteStore, name: str, nudge: Row | None) -> Waiting:
    """What waits for ``name``; ``nudge``: the nudge open for it, as the caller found it
    (closed here when none of its messages waits any more)."""
    queued = store.queued(name)
    failures = store.retryable_failures(name)
    ids = [int(m["id"]) for m in queued]
    if nudge is not None and answered(nudge["message_ids"], ids):
        store.close_nudge(int(nudge["id"]), "done")  # answered another way (the inbox)
        nudge = None
    return Waiting(
        queued=ids,
        failed=[Failed(int(f["id"]), int(f["attempts"]), float(f["failed_at"])) for f in failures],
        senders={int(m["id"]): str(m["sender"]) for m in [*queued, *failures]},
        nudge=nudge,
    )
