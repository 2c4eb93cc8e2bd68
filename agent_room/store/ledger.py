"""The ledger's question to the room: every handover with the times of its life.

*Applied* is read from what the room already records rather than written by anyone:
the first turn of the recipient's sessions that ended after the handover reached it
(delivered by a hook, or read from the inbox). Nothing on the hook path changes for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.turn.store.params import Params
from agent_room.turn.store.sqlite_base import StoreBase, rows

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

_RECEIVED = "coalesce(m.delivered_at, m.read_at)"

_SELECT = f"""
SELECT h.message_id AS id, m.sender, m.recipient, h.state, h.requested_at, h.decided_at,
       h.decided_by, h.reason, {_RECEIVED} AS received_at,
       CASE WHEN h.state = 'approved' AND {_RECEIVED} IS NOT NULL THEN (
           SELECT min(t.stopped_at) FROM turns t
           WHERE t.session_id IN (
               SELECT s.session_id FROM sessions s
               WHERE s.name = m.recipient AND s.session_id IS NOT NULL)
             AND t.stopped_at >= {_RECEIVED})
       END AS applied_at
FROM handovers h JOIN messages m ON m.id = h.message_id
"""


def collaborations(
    store: StoreBase, *, agent: str | None = None, since: float | None = None
) -> list[Row]:
    """Handovers oldest first, those ``agent`` sent or received, requested since ``since``."""
    p = Params()
    where: list[str] = []
    if agent is not None:
        where.append(f"(m.sender = {p(agent)} OR m.recipient = {p(agent)})")
    if since is not None:
        where.append(f"h.requested_at >= {p(since)}")
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    return rows(store.conn.execute(f"{_SELECT}{clause} ORDER BY h.message_id", p))
