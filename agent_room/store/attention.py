"""What may need the operator now, read from the room in one pass (the notifier's and the
console's; ``core.attention.alerts`` decides). The status line's counts are the turn
path's (``agent_room.turn.store.attention``)."""

from __future__ import annotations

from agent_room.core.attention import RoomFacts
from agent_room.turn.core.status_line import OPERATOR
from agent_room.turn.store.port import Connection


def facts(conn: Connection, now: float) -> RoomFacts:
    """Everything that may need the operator now (``core.attention.alerts`` decides)."""
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
        " WHERE read_at IS NULL AND status = 'failed' AND recipient != $1"
        " GROUP BY recipient ORDER BY recipient",
        (OPERATOR,),
    ).fetchall()
    frozen = conn.execute(
        "SELECT id, initiator, responder, coalesce(freeze_reason, ''),"
        " coalesce(frozen_at, updated_at) FROM links WHERE state = 'frozen' ORDER BY id"
    ).fetchall()
    messages = conn.execute(
        "SELECT id, sender, substr(body, 1, 200) FROM messages"
        " WHERE recipient = $1 AND read_at IS NULL ORDER BY id",
        (OPERATOR,),
    ).fetchall()
    budgets = conn.execute(
        "SELECT m.scope, m.level, m.spent_usd, b.limit_usd, b.span, m.span_start"
        " FROM budget_marks m JOIN budgets b ON b.scope = m.scope"
        " WHERE m.span_start <= $1 AND m.span_start + b.span > $2 ORDER BY m.at",
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
