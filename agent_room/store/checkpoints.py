"""Resume checkpoints in SQLite: a row marking how far a session's memory went."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite_base import event, rows

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agent_room.turn.store.sqlite_base import Row, StoreBase


def add(
    store: StoreBase,
    *,
    name: str,
    session_id: str,
    kind: str,
    note: str | None,
    cwd: str | None,
    upto_seq: int | None,
    at: float,
) -> int:
    """Mark the session's memory as it is now (or up to item ``upto_seq``); return the id."""
    with write_transaction(store.conn) as conn:
        if upto_seq is None:
            found = conn.execute(
                "SELECT seq FROM memory_cursors WHERE session_id = $1", (session_id,)
            ).fetchone()
            upto_seq = int(found[0]) if found else 0
        last = conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0]
        checkpoint_id = conn.execute(
            "INSERT INTO checkpoints (name, session_id, kind, note, cwd, upto_seq, upto_message,"
            " created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING id",
            (name, session_id, kind, note, cwd, upto_seq, int(last), at),
        ).fetchone()[0]
        event(
            conn,
            at,
            "checkpoint.created",
            name,
            session_id,
            None,
            {"id": checkpoint_id, "kind": kind},
        )
    return int(checkpoint_id)


def get(store: StoreBase, checkpoint_id: int) -> Row | None:
    """One checkpoint by id."""
    row = store.conn.execute("SELECT * FROM checkpoints WHERE id = $1", (checkpoint_id,)).fetchone()
    return dict(row) if row else None


def listed(
    store: StoreBase, *, name: str | None = None, session_id: str | None = None
) -> list[Row]:
    """Checkpoints newest first, of a name or of a session (or all)."""
    where, params = "", []
    if session_id is not None:
        where, params = " WHERE session_id = $1", [session_id]
    elif name is not None:
        where, params = " WHERE name = $1", [name]
    return rows(store.conn.execute(f"SELECT * FROM checkpoints{where} ORDER BY id DESC", params))


def delete(store: StoreBase, ids: Sequence[int]) -> None:
    """Forget checkpoints (the memory they point into stays)."""
    if not ids:
        return
    with write_transaction(store.conn) as conn:
        conn.executemany("DELETE FROM checkpoints WHERE id = $1", [(i,) for i in ids])


def messages_upto(store: StoreBase, name: str, upto: int) -> list[Row]:
    """Messages ``name`` sent or received up to message ``upto``, with handover states."""
    return rows(
        store.conn.execute(
            "SELECT m.id, m.kind, m.sender, m.recipient, m.body, m.created_at, h.state"
            " FROM messages m LEFT JOIN handovers h ON h.message_id = m.id"
            " WHERE (m.sender = $1 OR m.recipient = $2) AND m.id <= $3 AND m.kind != 'system'"
            " ORDER BY m.id",
            (name, name, upto),
        )
    )


def ended_unsaved(store: StoreBase) -> list[Row]:
    """Ended sessions of this host the worker followed that have no checkpoint since they
    ended (each host checkpoints its own: the end of a transcript is read there)."""
    return rows(
        store.conn.execute(
            "SELECT s.name, s.session_id, s.cwd, s.transcript_path, s.ended_at, s.host"
            " FROM sessions s JOIN memory_cursors c ON c.session_id = s.session_id"
            " WHERE s.state = 'ended' AND s.ended_at IS NOT NULL AND coalesce(s.host, $1) = $2"
            " AND NOT EXISTS (SELECT 1 FROM checkpoints k WHERE k.session_id = s.session_id"
            "   AND k.kind = 'session_end' AND k.created_at >= s.ended_at)",
            (store.host, store.host),
        )
    )


def cancel(store: StoreBase, message_id: int) -> None:
    """Cancel a message nobody received yet (a resume whose agent did not start)."""
    with write_transaction(store.conn) as conn:
        conn.execute(
            "UPDATE messages SET status = 'cancelled' WHERE id = $1 AND status = 'queued'",
            (message_id,),
        )
