"""The status line's counts, in one read-only query (the notifier's facts are
``agent_room.turn.store.attention``'s).

Functions over a bare connection rather than store methods: ``agent-room status`` runs
from a tmux status bar every few seconds and opens only ``StoreBase`` (the standard
library and the connection). Every query keeps to an index or a partial index, so a
long history costs nothing: pending handovers, live sessions, unread messages.
"""

from __future__ import annotations

import os

from agent_room.turn.core.status_line import OPERATOR, StatusCounts
from agent_room.turn.store.engine import database_url
from agent_room.turn.store.home import DB_NAME, ensure_room_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.store.port import Connection


_COUNTS = (
    "SELECT (SELECT count(*) FROM handovers WHERE state = 'pending'),"
    " (SELECT count(*) FROM sessions WHERE left_at IS NULL AND state = 'waiting'),"
    " (SELECT count(*) FROM messages WHERE read_at IS NULL AND status = 'failed'"
    "  AND recipient != $1),"
    " (SELECT count(*) FROM links WHERE state = 'frozen'),"
    " (SELECT count(*) FROM messages WHERE recipient = $2 AND read_at IS NULL)"
)


def room_exists(home: str) -> bool:
    """Whether ``home`` holds a room's database; a room folder that is not private is
    refused (``UnsafeRoom``) rather than passed over."""
    if os.path.lexists(home):
        ensure_room_dir(home)
        if database_url(home) is not None:  # on PostgreSQL: made when first opened
            return True
    return os.path.exists(os.path.join(home, DB_NAME))


def status_counts(conn: Connection) -> StatusCounts:
    """The numbers of the status line, in one statement."""
    row = conn.execute(_COUNTS, (OPERATOR, OPERATOR)).fetchone()
    return StatusCounts(*(int(v) for v in row))
