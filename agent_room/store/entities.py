"""The shared entity registry and the record of changed files, in SQLite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import Params
from agent_room.turn.store.port import Connection
from agent_room.turn.store.sqlite_base import event, rows

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row, StoreBase

MESSAGES_KEY = "entity_message_cursor"
"""The room setting holding the last message whose entities were recorded."""
_COLUMNS = "id, type, name, context, confidence, version, merge_count, updated_at, updated_by"


def exact(store: StoreBase, kind: str, key: str) -> Row | None:
    """The entity of this type whose compared name is ``key``."""
    row = store.conn.execute(
        f"SELECT {_COLUMNS} FROM entities WHERE type = $1 AND key = $2", (kind, key)
    ).fetchone()
    return dict(row) if row else None


def entity(store: StoreBase, entity_id: int) -> Row | None:
    """One entity by id."""
    row = store.conn.execute(
        f"SELECT {_COLUMNS} FROM entities WHERE id = $1", (entity_id,)
    ).fetchone()
    return dict(row) if row else None


def keys(store: StoreBase, kind: str) -> dict[int, str]:
    """Every entity of a type, id to compared name (for the fuzzy match)."""
    found = store.conn.execute("SELECT id, key FROM entities WHERE type = $1", (kind,))
    return {int(r[0]): str(r[1]) for r in found}


def add(
    store: StoreBase,
    *,
    kind: str,
    name: str,
    key: str,
    context: str,
    confidence: float,
    agent: str,
    session_id: str | None,
    source: str,
    at: float,
) -> int | None:
    """A new entity with its first mention; return its id (None: another worker, of
    another host, added it since the caller looked)."""
    with write_transaction(store.conn) as conn:
        if conn.execute(
            "SELECT 1 FROM entities WHERE type = $1 AND key = $2", (kind, key)
        ).fetchone():
            return None
        entity_id = conn.execute(
            "INSERT INTO entities (type, name, key, context, confidence, created_at, updated_at,"
            " updated_by) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) RETURNING id",
            (kind, name, key, context, confidence, at, at, agent),
        ).fetchone()[0]
        _mention(conn, entity_id, agent, session_id, source, context, at)
    return int(entity_id)


def _mention(
    conn: Connection,
    entity_id: int,
    agent: str,
    session_id: str | None,
    source: str,
    context: str,
    at: float,
) -> None:
    conn.execute(
        "INSERT INTO entity_mentions (entity_id, agent, session_id, source, context, at)"
        " VALUES ($1,$2,$3,$4,$5,$6)",
        (entity_id, agent, session_id, source, context[:300], at),
    )


def update(
    store: StoreBase,
    entity_id: int,
    *,
    context: str | None,
    confidence: float | None,
    agent: str,
    session_id: str | None,
    source: str,
    mention_context: str,
    conflict: bool,
    at: float,
) -> None:
    """Record a mention of a known entity: its merged context (a new version) when
    ``context`` is given, a conflict for the operator when ``conflict``."""
    with write_transaction(store.conn) as conn:
        if context is not None:
            conn.execute(
                "UPDATE entities SET context = $1, confidence = $2, version = version + 1,"
                " merge_count = merge_count + 1, updated_at = $3, updated_by = $4 WHERE id = $5",
                (context, confidence, at, agent, entity_id),
            )
        if conflict:
            conn.execute(
                "INSERT INTO entity_conflicts (entity_id, agent, context, confidence, at)"
                " VALUES ($1,$2,$3,$4,$5)",
                (entity_id, agent, mention_context, confidence or 0.0, at),
            )
            event(conn, at, "entity.conflict", agent, str(entity_id))
        _mention(conn, entity_id, agent, session_id, source, mention_context, at)


def mentions(store: StoreBase, entity_id: int, limit: int = 20) -> list[Row]:
    """Who mentioned an entity when, newest first."""
    return rows(
        store.conn.execute(
            "SELECT agent, session_id, source, context, at FROM entity_mentions"
            " WHERE entity_id = $1 ORDER BY at DESC, id DESC LIMIT $2",
            (entity_id, limit),
        )
    )


def listed(store: StoreBase, *, kind: str | None = None, limit: int = 200) -> list[Row]:
    """Entities most recently updated first, with their mention counts."""
    p = Params()
    where = f"WHERE type = {p(kind)}" if kind else ""
    return rows(
        store.conn.execute(
            f"SELECT {_COLUMNS}, (SELECT count(*) FROM entity_mentions m"
            f" WHERE m.entity_id = e.id) AS mentions FROM entities e {where}"
            f" ORDER BY updated_at DESC, id DESC LIMIT {p(limit)}",
            p,
        )
    )


def names(store: StoreBase, kind: str | None = None) -> dict[int, str]:
    """Every entity's name by id (of a type), for a fuzzy search."""
    where, params = ("WHERE type = $1", (kind,)) if kind else ("", ())
    found = store.conn.execute(f"SELECT id, name FROM entities {where}", params)
    return {int(r[0]): str(r[1]) for r in found}


def fold(store: StoreBase, keep: int, gone: int, *, context: str, agent: str, at: float) -> None:
    """Merge entity ``gone`` into ``keep``: mentions and conflicts move, ``gone`` goes."""
    with write_transaction(store.conn) as conn:
        merged = conn.execute("SELECT merge_count FROM entities WHERE id = $1", (gone,)).fetchone()
        conn.execute(
            "UPDATE entities SET context = $1, version = version + 1,"
            " merge_count = merge_count + 1 + $2, updated_at = $3, updated_by = $4 WHERE id = $5",
            (context, int(merged[0]) if merged else 0, at, agent, keep),
        )
        conn.execute("UPDATE entity_mentions SET entity_id = $1 WHERE entity_id = $2", (keep, gone))
        conn.execute(
            "UPDATE entity_conflicts SET entity_id = $1 WHERE entity_id = $2", (keep, gone)
        )
        conn.execute("DELETE FROM entities WHERE id = $1", (gone,))
        event(conn, at, "entity.merged", agent, str(keep), data={"gone": gone})


def conflicts(store: StoreBase) -> list[Row]:
    """Conflicts waiting for the operator, oldest first, with their entity."""
    return rows(
        store.conn.execute(
            "SELECT c.id, c.entity_id, c.agent, c.context, c.confidence, c.at, e.type, e.name,"
            " e.context AS current FROM entity_conflicts c JOIN entities e ON e.id = c.entity_id"
            " WHERE c.resolved_at IS NULL ORDER BY c.id"
        )
    )


def resolve(store: StoreBase, conflict_id: int, *, context: str | None, at: float, by: str) -> bool:
    """Close a conflict; with ``context`` the entity takes it (a new version)."""
    with write_transaction(store.conn) as conn:
        row = conn.execute(
            "SELECT entity_id FROM entity_conflicts WHERE id = $1 AND resolved_at IS NULL",
            (conflict_id,),
        ).fetchone()
        if row is None:
            return False
        if context is not None:
            conn.execute(
                "UPDATE entities SET context = $1, version = version + 1, updated_at = $2,"
                " updated_by = $3 WHERE id = $4",
                (context, at, by, row[0]),
            )
        conn.execute(
            "UPDATE entity_conflicts SET resolved_at = $1, resolution = $2 WHERE id = $3",
            (at, "taken" if context is not None else "kept", conflict_id),
        )
    return True


def changed_file(
    store: StoreBase,
    path: str,
    session_id: str,
    name: str,
    *,
    at: float,
    window: float,
    warn: bool = True,
) -> list[Row]:
    """Record that a session changed a file; with ``warn``, return the other live
    sessions that changed it within ``window`` seconds and were not warned of it within
    the window (they and this session are marked warned)."""
    with write_transaction(store.conn) as conn:
        conn.execute(
            "INSERT INTO file_changes (path, session_id, name, at) VALUES ($1,$2,$3,$4)"
            " ON CONFLICT(path, session_id) DO UPDATE SET at = max(file_changes.at, excluded.at),"
            " name = excluded.name",
            (path, session_id, name, at),
        )
        if not warn:
            return []
        others = rows(
            conn.execute(
                "SELECT f.session_id, f.name, f.at FROM file_changes f"
                " JOIN sessions s ON s.session_id = f.session_id"
                " WHERE f.path = $1 AND f.session_id != $2 AND f.name != $3 AND f.at >= $4"
                " AND s.state != 'ended' AND s.left_at IS NULL"
                " AND (f.warned_at IS NULL OR f.warned_at < $5)",
                (path, session_id, name, at - window, at - window),
            )
        )
        if others:
            conn.executemany(
                "UPDATE file_changes SET warned_at = $1 WHERE path = $2 AND session_id = $3",
                [(at, path, o["session_id"]) for o in others] + [(at, path, session_id)],
            )
    return others


def messages_after(store: StoreBase, after: int, limit: int = 500) -> list[Row]:
    """Agents' chat messages after message ``after``, oldest first (a handover's entities
    come from its fields, when its context is prepared)."""
    return rows(
        store.conn.execute(
            "SELECT id, sender, body FROM messages WHERE id > $1 AND kind = 'chat'"
            " ORDER BY id LIMIT $2",
            (after, limit),
        )
    )


def mentioned_by(store: StoreBase, agent: str, until: float, limit: int = 100) -> list[Row]:
    """The entities ``agent`` mentioned up to ``until``, most recently mentioned first."""
    return rows(
        store.conn.execute(
            "SELECT e.type, e.name, e.context, max(m.at) AS at FROM entity_mentions m"
            " JOIN entities e ON e.id = m.entity_id WHERE m.agent = $1 AND m.at <= $2"
            " GROUP BY e.id ORDER BY at DESC LIMIT $3",
            (agent, until, limit),
        )
    )


def clash_notes(store: StoreBase, since: float) -> dict[str, str]:
    """Per session id, ``⚠ PATH with @other`` for a file it and another session were
    warned of since ``since`` (the newest such file)."""
    found = store.conn.execute(
        "SELECT f.session_id, f.path, g.name FROM file_changes f JOIN file_changes g"
        " ON g.path = f.path AND g.session_id != f.session_id AND g.warned_at >= $1"
        " WHERE f.warned_at >= $2 ORDER BY f.warned_at",
        (since, since),
    )
    return {str(r[0]): f"⚠ {r[1].rsplit('/', 1)[-1]} with @{r[2]}" for r in found}
