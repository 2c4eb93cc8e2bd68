"""Read-only queries of what needs the operator: the status line's counts and the
notifier's facts.

Functions over a bare connection rather than store methods: ``agent-room status`` runs
from a tmux status bar every few seconds and opens only ``StoreBase`` (the standard
library and the connection). Every query keeps to an index or a partial index, so a
long history costs nothing: pending handovers, live sessions, unread messages.
"""

from __future__ import annotations

import os

from agent_room.core.status_line import OPERATOR, StatusCounts
from agent_room.store.engine import database_url
from agent_room.store.home import DB_NAME, ensure_room_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

    from agent_room.core.attention import RoomFacts

_COUNTS = (
    "SELECT (SELECT count(*) FROM handovers WHERE state = 'pending'),"
    " (SELECT count(*) FROM sessions WHERE left_at IS NULL AND state = 'waiting'),"
    " (SELECT count(*) FROM messages WHERE read_at IS NULL AND status = 'failed'"
    "  AND recipient != ?),"
    " (SELECT count(*) FROM links WHERE state = 'frozen'),"
    " (SELECT count(*) FROM messages WHERE recipient = ? AND read_at IS NULL)"
)


def room_exists(home: str) -> bool:
    """Whether ``home`` holds a room's database; a room folder that is not private is
    refused (``UnsafeRoom``) rather than passed over."""
    if os.path.lexists(home):
        ensure_room_dir(home)
        if database_url(home) is not None:  # on PostgreSQL: made when first opened
            return True
    return os.path.exists(os.path.join(home, DB_NAME))


def status_counts(conn: sqlite3.Connection) -> StatusCounts:
    """The numbers of the status line, in one statement."""
    row = conn.execute(_COUNTS, (OPERATOR, OPERATOR)).fetchone()
    return StatusCounts(*(int(v) for v in row))


def facts(conn: sqlite3.Connection, now: float) -> RoomFacts:
    """Everything that may need the operator now (``core.attention.alerts`` decides)."""
    from agent_room.core.attention import RoomFacts

    handovers = conn.execute(
        "SELECT h.message_id, m.sender, m.recipient FROM handovers h"
        " JOIN messages m ON m.id = h.message_id WHERE h.state = 'pending'"
        " ORDER BY h.message_id"
    ).fetchall()
    waiting = conn.execute(
        "SELECT name, coalesce(session_id, name), updated_at FROM sessions"
        " WHERE left_at IS NULL AND state = 'waiting' ORDER BY updated_at"
    ).fetchall()
    failed = conn.execute(
        "SELECT recipient, count(*), max(id) FROM messages"
        " WHERE read_at IS NULL AND status = 'failed' AND recipient != ?"
        " GROUP BY recipient ORDER BY recipient",
        (OPERATOR,),
    ).fetchall()
    frozen = conn.execute(
        "SELECT id, initiator, responder, coalesce(freeze_reason, ''),"
        " coalesce(frozen_at, updated_at) FROM links WHERE state = 'frozen' ORDER BY id"
    ).fetchall()
    messages = conn.execute(
        "SELECT id, sender, substr(body, 1, 200) FROM messages"
        " WHERE recipient = ? AND read_at IS NULL ORDER BY id",
        (OPERATOR,),
    ).fetchall()
    budgets = conn.execute(
        "SELECT m.scope, m.level, m.spent_usd, b.limit_usd, b.span, m.span_start"
        " FROM budget_marks m JOIN budgets b ON b.scope = m.scope"
        " WHERE m.span_start <= ? AND m.span_start + b.span > ? ORDER BY m.at",
        (now, now),
    ).fetchall()
    loops = conn.execute(
        "SELECT id, path, coalesce(reason, '') FROM loop_holds WHERE released_at IS NULL"
        " ORDER BY id"
    ).fetchall()
    return RoomFacts(
        budgets=tuple(
            (str(s), int(v), float(c), float(li), float(sp), float(st))
            for s, v, c, li, sp, st in budgets
        ),
        loops=tuple((int(i), tuple(str(p).split()), str(r)) for i, p, r in loops),
        handovers=tuple((int(i), str(s), str(r)) for i, s, r in handovers),
        waiting=tuple((str(n), str(s), float(t)) for n, s, t in waiting),
        failed=tuple((str(n), int(c), int(m)) for n, c, m in failed),
        frozen=tuple((int(i), str(a), str(b), str(w), float(t)) for i, a, b, w, t in frozen),
        messages=tuple((int(i), str(s), _first_line(str(b))) for i, s, b in messages),
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip()[:80]
    return ""
