"""The memory tables: items drawn from transcripts, read cursors, handover contexts.

Items are searched with FTS5 (``memory_fts``, kept in step by triggers) so that the
relevance of an item to a handover's task is SQLite's bm25, not a hand-written scorer.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from agent_room.core.memory import Candidate
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import Params
from agent_room.turn.store.sqlite_base import rows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agent_room.core.memory import Context, Item
    from agent_room.turn.store.sqlite_base import Row, StoreBase

RECENT = 300
"""The newest items of a session always offered to a context, matching or not."""
MATCHES = 300
"""The best bm25 matches offered on top of them."""


def cursor(store: StoreBase, session_id: str) -> Row | None:
    """Where reading the session's transcript stopped."""
    row = store.conn.execute(
        "SELECT * FROM memory_cursors WHERE session_id = $1", (session_id,)
    ).fetchone()
    return dict(row) if row else None


def remember(
    store: StoreBase,
    session_id: str,
    *,
    path: str,
    inode: int | None,
    offset: int,
    items: Sequence[Item],
    problem: str | None,
    at: float,
) -> int:
    """Store the items read up to ``offset`` and move the cursor there, in one
    transaction (an item is never stored twice, nor a stretch skipped); return the
    session's item count."""
    with write_transaction(store.conn) as conn:
        found = conn.execute(
            "SELECT seq FROM memory_cursors WHERE session_id = $1", (session_id,)
        ).fetchone()
        seq = int(found[0]) if found else 0
        conn.executemany(
            "INSERT INTO memory_items (session_id, seq, kind, text, path, at) VALUES"
            " ($1,$2,$3,$4,$5,$6)",
            [
                (session_id, seq + i + 1, item.kind, item.text, item.path, item.at)
                for i, item in enumerate(items)
            ],
        )
        seq += len(items)
        conn.execute(
            'INSERT INTO memory_cursors (session_id, path, inode, "offset", seq, problem,'
            " updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT(session_id) DO UPDATE SET"
            ' path = excluded.path, inode = excluded.inode, "offset" = excluded."offset",'
            " seq = excluded.seq,"
            " problem = excluded.problem, updated_at = excluded.updated_at",
            (session_id, path, inode, offset, seq, problem, at),
        )
    return seq


def items(
    store: StoreBase, session_id: str, *, limit: int | None = None, upto: int | None = None
) -> list[Row]:
    """The session's items oldest first (the last ``limit`` of them, up to item ``upto``)."""
    found = rows(
        store.conn.execute(
            "SELECT seq, kind, text, path, at FROM memory_items WHERE session_id = $1"
            " AND seq <= $2 ORDER BY seq DESC LIMIT $3",
            (session_id, 2**62 if upto is None else upto, 2**62 if limit is None else limit),
        )
    )
    found.reverse()
    return found


_MATCHES_SQLITE = (
    "SELECT i.seq, i.kind, i.text, bm25(memory_fts) AS rank FROM memory_fts"
    " JOIN memory_items i ON i.id = memory_fts.rowid WHERE memory_fts MATCH $1"
    " AND i.session_id = $2 AND i.seq <= $3 ORDER BY rank LIMIT $4"
)
_MATCHES_POSTGRES = (
    "SELECT i.seq, i.kind, i.text, -ts_rank(to_tsvector('simple', i.text), q) AS rank"
    " FROM memory_items i, websearch_to_tsquery('simple', $1) q"
    " WHERE to_tsvector('simple', i.text) @@ q"
    " AND i.session_id = $2 AND i.seq <= $3 ORDER BY rank LIMIT $4"
)
"""The same question of PostgreSQL's full-text index (the FTS5 query's quoted words
joined by OR read the same in ``websearch_to_tsquery``); lower ranks match better."""


def candidates(
    store: StoreBase, session_id: str, query: str | None, *, upto: int | None = None
) -> list[Candidate]:
    """The session's newest items and its best matches for ``query`` (an FTS5 query), up
    to item ``upto``."""
    last = 2**62 if upto is None else upto
    offered = [
        Candidate(int(r["seq"]), r["kind"], r["text"])
        for r in items(store, session_id, limit=RECENT, upto=last)
    ]
    if query:
        found = store.conn.execute(
            _MATCHES_POSTGRES if store.engine == "postgresql" else _MATCHES_SQLITE,
            (query, session_id, last, MATCHES),
        )
        offered += [Candidate(int(r[0]), r[1], r[2], float(r[3])) for r in found]
    return offered


def last_seq_before(store: StoreBase, session_id: str, at: float) -> int | None:
    """The newest item the session's transcript dates at or before ``at`` (None when no
    item carries a time)."""
    stamp = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    dated = store.conn.execute(
        "SELECT 1 FROM memory_items WHERE session_id = $1 AND at IS NOT NULL LIMIT 1",
        (session_id,),
    ).fetchone()
    if dated is None:
        return None
    found = store.conn.execute(
        "SELECT max(seq) FROM memory_items WHERE session_id = $1 AND at <= $2",
        (session_id, stamp),
    ).fetchone()
    return int(found[0]) if found and found[0] is not None else 0


def save_context(
    store: StoreBase,
    message_id: int,
    *,
    session_id: str | None,
    context: Context,
    problem: str | None,
    at: float,
) -> None:
    """Keep the context prepared for a handover (the newest preparation wins)."""
    with write_transaction(store.conn) as conn:
        conn.execute(
            "INSERT INTO handover_contexts"
            " (message_id, session_id, text, tokens, items, problem, built_at)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (message_id) DO UPDATE SET"
            " session_id = excluded.session_id, text = excluded.text,"
            " tokens = excluded.tokens, items = excluded.items, problem = excluded.problem,"
            " built_at = excluded.built_at, attached_at = NULL",
            (message_id, session_id, context.text, context.tokens, context.items, problem, at),
        )


def context(store: StoreBase, message_id: int) -> Row | None:
    """The context prepared for a handover, if any."""
    row = store.conn.execute(
        "SELECT * FROM handover_contexts WHERE message_id = $1", (message_id,)
    ).fetchone()
    return dict(row) if row else None


def contexts(store: StoreBase, message_ids: Sequence[int]) -> dict[int, str]:
    """The prepared contexts' texts of some handovers, by id."""
    if not message_ids:
        return {}
    p = Params()
    found = store.conn.execute(
        "SELECT message_id, text FROM handover_contexts WHERE message_id IN"
        f" ({p.each(message_ids)})",
        p,
    )
    return {int(r[0]): str(r[1]) for r in found}


def unprepared(store: StoreBase) -> list[Row]:
    """Pending handovers with no context yet whose sender's session runs on this host (its
    transcript is read here) or that holds no session any more, oldest first."""
    return rows(
        store.conn.execute(
            "SELECT h.message_id, h.fields, m.sender, m.body FROM handovers h"
            " JOIN messages m ON m.id = h.message_id"
            " LEFT JOIN handover_contexts c ON c.message_id = h.message_id"
            " LEFT JOIN sessions s ON s.name = m.sender AND s.left_at IS NULL"
            " WHERE h.state = 'pending' AND c.message_id IS NULL"
            " AND (s.name IS NULL OR coalesce(s.host, $1) = $2) ORDER BY h.message_id",
            (store.host, store.host),
        )
    )


def attach(store: StoreBase, message_id: int, *, at: float) -> bool:
    """Append the prepared context to a handover's body while it is still held (once;
    an empty one is not worth the recipient's attention)."""
    with write_transaction(store.conn) as conn:
        found = conn.execute(
            "SELECT text FROM handover_contexts WHERE message_id = $1 AND attached_at IS NULL"
            " AND items > 0",
            (message_id,),
        ).fetchone()
        if found is None:
            return False
        updated = conn.execute(
            "UPDATE messages SET body = body || $1 WHERE id = $2 AND status = 'held'",
            ("\n\n" + str(found[0]), message_id),
        )
        if updated.rowcount == 0:
            return False
        conn.execute(
            "UPDATE handover_contexts SET attached_at = $1 WHERE message_id = $2", (at, message_id)
        )
        return True


def followed(store: StoreBase) -> list[Row]:
    """The live sessions of this host, whose transcripts its memory worker follows (the
    files of another host's sessions are on that host), each with where its cursor stands
    (``cursor_path``, ``offset``, ``inode``, ``problem``; NULL before the first read): one
    query for a pass, which then reads only the files that moved."""
    return rows(
        store.conn.execute(
            'SELECT s.name, s.session_id, s.transcript_path, c.path AS cursor_path, c."offset",'
            " c.inode, c.problem FROM sessions s"
            " LEFT JOIN memory_cursors c ON c.session_id = s.session_id"
            " WHERE s.left_at IS NULL AND s.state != 'ended' AND s.session_id IS NOT NULL"
            " AND s.transcript_path IS NOT NULL AND coalesce(s.host, $1) = $2",
            (store.host, store.host),
        )
    )


def in_turn_here(store: StoreBase) -> bool:
    """Whether a live session of this host is in a turn (busy, or in a dialog): its
    transcript grows without the room hearing of it."""
    row = store.conn.execute(
        "SELECT 1 FROM sessions WHERE left_at IS NULL AND state IN ('busy', 'waiting')"
        " AND coalesce(host, $1) = $2 LIMIT 1",
        (store.host, store.host),
    ).fetchone()
    return row is not None


def note_problem(store: StoreBase, session_id: str, path: str, problem: str, *, at: float) -> None:
    """Keep the latest problem with a session's transcript on its cursor."""
    with write_transaction(store.conn) as conn:
        conn.execute(
            "INSERT INTO memory_cursors (session_id, path, problem, updated_at) VALUES"
            " ($1,$2,$3,$4)"
            " ON CONFLICT(session_id) DO UPDATE SET problem = excluded.problem,"
            " updated_at = excluded.updated_at",
            (session_id, path, problem, at),
        )


def forget_before(store: StoreBase, cutoff: float) -> list[str]:
    """Forget the items of sessions last read before ``cutoff`` that no checkpoint needs;
    return their session ids."""
    with write_transaction(store.conn) as conn:
        stale = [
            str(r[0])
            for r in conn.execute(
                "SELECT c.session_id FROM memory_cursors c WHERE c.updated_at < $1 AND NOT EXISTS"
                " (SELECT 1 FROM checkpoints k WHERE k.session_id = c.session_id)",
                (cutoff,),
            )
        ]
        for session_id in stale:
            conn.execute("DELETE FROM memory_items WHERE session_id = $1", (session_id,))
            conn.execute("DELETE FROM memory_cursors WHERE session_id = $1", (session_id,))
    return stale


def bookmark(store: StoreBase, key: str) -> int | None:
    """A worker's place in a log (the last id it handled), if it has one."""
    row = store.conn.execute("SELECT value FROM settings WHERE key = $1", (key,)).fetchone()
    return int(row[0]) if row else None


def set_bookmark(store: StoreBase, key: str, value: int) -> None:
    """Move a worker's place: bookkeeping, not a setting anyone changed (no event, and
    the room's change count stays)."""
    with write_transaction(store.conn, bookkeeping=True) as conn:
        conn.execute(
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT(key)"
            " DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )


def move_bookmark(store: StoreBase, key: str, before: int | None, after: int) -> bool:
    """Move a worker's place from ``before`` to ``after`` unless another worker (of
    another host) moved it meanwhile; whether this one did, and so does the work between
    (bookkeeping, as ``set_bookmark``)."""
    with write_transaction(store.conn, bookkeeping=True) as conn:
        found = conn.execute("SELECT value FROM settings WHERE key = $1", (key,)).fetchone()
        if (int(found[0]) if found else None) != before:
            return False
        conn.execute(
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT(key)"
            " DO UPDATE SET value = excluded.value",
            (key, str(after)),
        )
        return True


def events_since(store: StoreBase, kind: str, after: int) -> tuple[list[Row], int]:
    """Audit events of one kind after id ``after``, and the newest event's id (the next
    ``after``: the log is read once, whatever its kinds)."""
    last = int(store.conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])
    found = rows(
        store.conn.execute(
            "SELECT id, subject, at FROM events WHERE id > $1 AND id <= $2 AND kind = $3 ORDER"
            " BY id",
            (after, last, kind),
        )
    )
    return found, last
