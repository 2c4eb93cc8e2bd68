"""The usage tables: every model request of every agent, read cursors, budgets.

Functions over the store's connection, one SQL for both engines (the PostgreSQL
connection takes the same statements). The questions the console and ``usage`` ask
keep to the ``usage_at`` index: they read the span asked about, never the whole
history. A request is stored once per session and key; when a client wrote it over
several lines, each count keeps its largest value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_room.core.usage import ROOM, Budget, Line, Record, Tokens
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite_base import StoreBase, rows

_LARGER = "CASE WHEN excluded.{0} > usage.{0} THEN excluded.{0} ELSE usage.{0} END"
_UPSERT = (
    "INSERT INTO usage (session_id, key, name, host, client, kind, ref, model, input, output,"
    " cache_read, cache_write, cost_usd, at, turn_id) VALUES"
    " ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)"
    " ON CONFLICT (session_id, key) DO UPDATE SET "
    + ", ".join(
        f"{c} = {_LARGER.format(c)}"
        for c in ("input", "output", "cache_read", "cache_write", "cost_usd")
    )
)
_SUMS = (
    "coalesce(sum(u.input), 0), coalesce(sum(u.output), 0), coalesce(sum(u.cache_read), 0),"
    " coalesce(sum(u.cache_write), 0), sum(u.cost_usd), count(*),"
    " coalesce(sum(CASE WHEN u.cost_usd IS NULL THEN 1 ELSE 0 END), 0)"
)
"""The columns every summary sums, in the order ``_line`` reads them."""


@dataclass(frozen=True, slots=True)
class Priced:
    """A record to store: what the client wrote, whose it is and what it cost."""

    record: Record
    name: str | None
    cost_usd: float | None
    kind: str = "turn"
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where reading one record file stopped."""

    path: str
    session_id: str
    inode: int | None
    offset: int
    model: str | None
    problem: str | None


def cursor(store: StoreBase, path: str) -> Cursor | None:
    """Where reading the record file at ``path`` stopped."""
    row = store.conn.execute(
        'SELECT path, session_id, inode, "offset", model, problem FROM usage_cursors'
        " WHERE path = $1",
        (path,),
    ).fetchone()
    return None if row is None else Cursor(*row)


def save(
    store: StoreBase,
    session_id: str,
    found: Sequence[Priced],
    *,
    path: str | None = None,
    inode: int | None = None,
    offset: int = 0,
    model: str | None = None,
    problem: str | None = None,
    at: float,
) -> int:
    """Store the records read up to ``offset`` of ``path`` and move its cursor there, in
    one transaction (a request is never counted twice, nor a stretch skipped); each goes
    to the session's turn it was made in. Return the records stored."""
    with write_transaction(store.conn) as conn:
        for item in found:
            record = item.record
            when = record.at if record.at is not None else at
            turn = conn.execute(
                "SELECT max(id) FROM turns WHERE session_id = $1 AND started_at <= $2",
                (session_id, when),
            ).fetchone()[0]
            tokens = record.tokens
            conn.execute(
                _UPSERT,
                (
                    session_id,
                    record.key,
                    item.name,
                    store.host,
                    record.client,
                    item.kind,
                    item.ref if item.ref is not None else record.agent_id,
                    record.model,
                    tokens.input,
                    tokens.output,
                    tokens.cache_read,
                    tokens.cache_write,
                    item.cost_usd,
                    when,
                    turn,
                ),
            )
        if path is not None:
            conn.execute(
                'INSERT INTO usage_cursors (path, session_id, inode, "offset", model, problem,'
                " updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (path) DO UPDATE SET"
                " session_id = excluded.session_id, inode = excluded.inode,"
                ' "offset" = excluded."offset", model = excluded.model, problem = excluded.problem,'
                " updated_at = excluded.updated_at",
                (path, session_id, inode, offset, model, problem, at),
            )
    return len(found)


ENDED_GRACE = 600.0
"""Seconds a session's record file is still read after it ended: its last turn's usage
may be written as the client exits, after the reader's last pass of it."""


def followed(store: StoreBase, now: float) -> list[dict[str, Any]]:
    """The record files this host reads: the transcripts of its live sessions (every
    client's) and of those that ended lately, and the subagents' transcripts of its
    sessions that a cursor has not finished yet. Each with where its cursor stands
    (``known``, ``offset``, ``inode``, ``problem``): one query for a pass, which then reads only the
    files that moved."""
    live = rows(
        store.conn.execute(
            "SELECT s.name, s.session_id, s.transcript_path AS path, NULL AS agent_id,"
            ' c."offset", c.inode, c.problem, c.path IS NOT NULL AS known FROM sessions s'
            " LEFT JOIN usage_cursors c ON c.path = s.transcript_path"
            " WHERE s.session_id IS NOT NULL AND s.transcript_path IS NOT NULL"
            " AND coalesce(s.host, $1) = $2 AND ((s.left_at IS NULL AND s.state != 'ended')"
            " OR coalesce(s.ended_at, s.left_at, s.updated_at) > $3)",
            (store.host, store.host, now - ENDED_GRACE),
        )
    )
    subagents = rows(
        store.conn.execute(
            "SELECT s.name, a.session_id, a.transcript_path AS path, a.agent_id,"
            ' NULL AS "offset", NULL AS inode, NULL AS problem, FALSE AS known FROM subagents a'
            " JOIN sessions s ON s.session_id = a.session_id"
            " LEFT JOIN usage_cursors c ON c.path = a.transcript_path"
            " WHERE a.transcript_path IS NOT NULL AND c.path IS NULL"
            " AND coalesce(s.host, $1) = $2",
            (store.host, store.host),
        )
    )
    return live + subagents


def ask_totals(store: StoreBase, session_id: str) -> dict[str | None, tuple[Tokens, float]]:
    """What the intercom's asks of one headless session stored, per model: tokens, cost."""
    found = store.conn.execute(
        "SELECT model, coalesce(sum(input), 0), coalesce(sum(output), 0),"
        " coalesce(sum(cache_read), 0), coalesce(sum(cache_write), 0),"
        " coalesce(sum(cost_usd), 0) FROM usage WHERE session_id = $1 AND kind = 'ask'"
        " GROUP BY model",
        (session_id,),
    ).fetchall()
    return {r[0]: (Tokens(int(r[1]), int(r[2]), int(r[3]), int(r[4])), float(r[5])) for r in found}


def reprice(store: StoreBase, model: str, price: tuple[float, float, float, float]) -> int:
    """Give every stored request of ``model`` its cost at ``price`` (dollars per million
    input, output, cache-read and cache-write tokens); return how many. The client's own
    price of an ask is kept."""
    with write_transaction(store.conn) as conn:
        return int(
            conn.execute(
                "UPDATE usage SET cost_usd = (input * $1 + output * $2 + cache_read * $3"
                " + cache_write * $4) / 1000000.0 WHERE model = $5 AND kind != 'ask'",
                (*price, model),
            ).rowcount
        )


def _line(key: str, values: Sequence[Any]) -> Line:
    line = Line(key)
    line.add(
        Tokens(int(values[0]), int(values[1]), int(values[2]), int(values[3])),
        None if values[4] is None else float(values[4]),
        int(values[5]),
        int(values[6]),
    )
    return line


def _whole(store: StoreBase, expression: str) -> str:
    """SQL for the whole part of a non-negative number: SQLite's cast truncates it,
    PostgreSQL's rounds it."""
    if store.engine == "postgresql":
        return f"CAST(floor({expression}) AS BIGINT)"
    return f"CAST({expression} AS INTEGER)"


def by_column(store: StoreBase, column: str, since: float, until: float) -> list[Line]:
    """Usage of ``[since, until)`` per agent (``name``), ``model``, day or ask."""
    expression = {
        "agent": "coalesce(u.name, '?')",
        "model": "coalesce(u.model, '?')",
        "day": _whole(store, "u.at / 86400"),
        "ask": "coalesce(u.ref, '?')",
        "subagent": "coalesce(u.name, '?') || '/' || coalesce(u.ref, '?')",
    }[column]
    where = {"ask": " AND u.kind = 'ask'", "subagent": " AND u.kind = 'turn' AND u.ref IS NOT NULL"}
    found = store.conn.execute(
        f"SELECT {expression} AS k, {_SUMS} FROM usage u WHERE u.at >= $1 AND u.at < $2"
        f"{where.get(column, '')} GROUP BY k ORDER BY k",
        (since, until),
    ).fetchall()
    return [_line(str(r[0]), r[1:]) for r in found]


def by_link(store: StoreBase, since: float, until: float) -> list[tuple[dict[str, Any], Line]]:
    """Usage of ``[since, until)`` per link: the turns its crossing records judged, of
    both sides (each linked session's turns are judged while the link is open)."""
    found = store.conn.execute(
        f"SELECT l.id, l.initiator, l.responder, l.state, {_SUMS} FROM link_turns t"
        " JOIN links l ON l.id = t.link_id JOIN usage u ON u.turn_id = t.turn_id"
        " AND u.session_id = t.session_id WHERE u.at >= $1 AND u.at < $2"
        " GROUP BY l.id, l.initiator, l.responder, l.state ORDER BY l.id",
        (since, until),
    ).fetchall()
    sides = store.conn.execute(
        f"SELECT t.link_id, u.name, {_SUMS} FROM link_turns t JOIN usage u"
        " ON u.turn_id = t.turn_id AND u.session_id = t.session_id"
        " WHERE u.at >= $1 AND u.at < $2 GROUP BY t.link_id, u.name",
        (since, until),
    ).fetchall()
    per_side: dict[int, dict[str, Any]] = {}
    for r in sides:
        per_side.setdefault(int(r[0]), {})[str(r[1])] = _line(str(r[1]), r[2:]).as_dict()
    return [
        (
            {
                "link": int(r[0]),
                "initiator": r[1],
                "responder": r[2],
                "state": r[3],
                "sides": per_side.get(int(r[0]), {}),
            },
            _line(f"#{r[0]} @{r[1]} <-> @{r[2]}", r[4:]),
        )
        for r in found
    ]


def spent_between(store: StoreBase, name: str, start: float, end: float) -> Line:
    """What ``name``'s sessions spent in ``[start, end]``."""
    values = store.conn.execute(
        f"SELECT {_SUMS} FROM usage u WHERE u.name = $1 AND u.at >= $2 AND u.at <= $3",
        (name, start, end),
    ).fetchone()
    return _line(name, values)


def last_usage_id(store: StoreBase) -> int:
    """The newest usage row's id (0 for none): whether anything was read since."""
    return int(store.conn.execute("SELECT coalesce(max(id), 0) FROM usage").fetchone()[0])


def cost_by_name(store: StoreBase, since: float) -> dict[str, tuple[float, bool]]:
    """Each agent's cost since ``since`` and whether all of it is known (``who`` and
    the console's column)."""
    found = store.conn.execute(
        "SELECT u.name, coalesce(sum(u.cost_usd), 0),"
        " coalesce(sum(CASE WHEN u.cost_usd IS NULL THEN 1 ELSE 0 END), 0)"
        " FROM usage u WHERE u.at >= $1 AND u.name IS NOT NULL GROUP BY u.name",
        (since,),
    ).fetchall()
    return {str(r[0]): (float(r[1]), int(r[2]) == 0) for r in found}


def series(store: StoreBase, since: float, until: float, step: float) -> list[tuple[float, float]]:
    """Cost per ``step`` seconds of ``[since, until)``, oldest first (the console's plot);
    empty steps are zeros."""
    found = store.conn.execute(
        f"SELECT {_whole(store, '(u.at - $1) / $2')} AS b, coalesce(sum(u.cost_usd), 0)"
        " FROM usage u WHERE u.at >= $3 AND u.at < $4 GROUP BY b",
        (since, step, since, until),
    ).fetchall()
    count = max(1, int((until - since) // step) + (1 if (until - since) % step else 0))
    values = [0.0] * count
    for bucket, cost in found:
        if 0 <= int(bucket) < count:
            values[int(bucket)] = float(cost)
    return [(since + i * step, v) for i, v in enumerate(values)]


# -- budgets -----------------------------------------------------------------------------


def budgets(store: StoreBase) -> list[Budget]:
    """Every budget, the room's first."""
    found = [
        Budget(str(r[0]), float(r[1]), float(r[2]))
        for r in store.conn.execute("SELECT scope, limit_usd, span FROM budgets ORDER BY scope")
    ]
    return sorted(found, key=lambda b: b.scope != ROOM)


def set_budget(store: StoreBase, budget: Budget, *, at: float, by: str) -> None:
    """Set (or replace) a budget; the levels it no longer reaches are forgotten, so a
    raised budget lets the agent's prompts through at once and warns again later."""
    with write_transaction(store.conn) as conn:
        conn.execute(
            "INSERT INTO budgets (scope, limit_usd, span, set_at, set_by) VALUES ($1,$2,$3,$4,$5)"
            " ON CONFLICT (scope) DO UPDATE SET limit_usd = excluded.limit_usd,"
            " span = excluded.span, set_at = excluded.set_at, set_by = excluded.set_by",
            (budget.scope, budget.limit_usd, budget.span, at, by),
        )
        conn.execute("DELETE FROM budget_marks WHERE scope = $1", (budget.scope,))


def clear_budget(store: StoreBase, scope: str) -> bool:
    """Remove a budget and its levels; whether there was one."""
    with write_transaction(store.conn) as conn:
        conn.execute("DELETE FROM budget_marks WHERE scope = $1", (scope,))
        return bool(conn.execute("DELETE FROM budgets WHERE scope = $1", (scope,)).rowcount)


def spent_since(store: StoreBase, scope: str, since: float) -> float:
    """What ``scope`` (a name, or the whole room) spent since ``since``, priced requests."""
    if scope == ROOM:
        found = store.conn.execute(
            "SELECT coalesce(sum(cost_usd), 0) FROM usage WHERE at >= $1", (since,)
        ).fetchone()
    else:
        found = store.conn.execute(
            "SELECT coalesce(sum(cost_usd), 0) FROM usage WHERE name = $1 AND at >= $2",
            (scope, since),
        ).fetchone()
    return float(found[0])


def marks(store: StoreBase, scope: str, span_start: float) -> set[int]:
    """The levels ``scope`` reached in the span starting at ``span_start``."""
    return {
        int(r[0])
        for r in store.conn.execute(
            "SELECT level FROM budget_marks WHERE scope = $1 AND span_start = $2",
            (scope, span_start),
        )
    }


def mark(
    store: StoreBase, scope: str, span_start: float, level: int, spent: float, at: float
) -> bool:
    """Record that ``scope`` reached ``level``; whether it is new (told once)."""
    with write_transaction(store.conn) as conn:
        return bool(
            conn.execute(
                "INSERT INTO budget_marks (scope, span_start, level, spent_usd, at)"
                " VALUES ($1,$2,$3,$4,$5) ON CONFLICT (scope, span_start, level) DO NOTHING",
                (scope, span_start, level, spent, at),
            ).rowcount
        )


def all_over(store: StoreBase, now: float) -> dict[str, str]:
    """Every scope whose budget is spent now, to the scope (the console, ``who``)."""
    return {
        str(r[0]): str(r[0])
        for r in store.conn.execute(
            "SELECT m.scope FROM budget_marks m JOIN budgets b ON b.scope = m.scope"
            " WHERE m.level >= 100 AND m.span_start <= $1 AND m.span_start + b.span > $2",
            (now, now),
        )
    }
