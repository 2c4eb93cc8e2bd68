"""Moving a room: every table of a SQLite room, the audit log included, into PostgreSQL.

The target is migrated to the same schema first; each table is copied row by row in
one transaction (all or nothing), and the id counters are moved past the copied ids so
the room goes on numbering where it stopped. A target that already holds a room is
refused unless ``replace`` is given: then its tables are emptied first (``TRUNCATE``,
which the audit log's append-only triggers do not stand in the way of).
"""

from __future__ import annotations

from agent_room.turn.core.errors import Refused
from agent_room.turn.store.params import placeholders
from agent_room.turn.store.postgres import PgConnection, connect
from agent_room.turn.store.sqlite_base import StoreBase

_SKIPPED = ("sqlite_", "memory_fts")
"""SQLite's own tables and the FTS5 index (PostgreSQL indexes the text itself)."""


def copy_room(
    source: StoreBase, url: str, *, replace: bool, timeout: float = 10.0
) -> dict[str, int]:
    """Copy ``source`` (a SQLite room) into the room at ``url``; rows copied per table."""
    if source.engine != "sqlite":
        raise Refused("the room to copy is not a SQLite room (AGENT_ROOM_DATABASE is set)")
    target = connect(url, timeout=timeout)
    try:
        tables = _parents_first(source)
        counts: dict[str, int] = {}
        target.begin_write()
        try:
            if not replace:
                _refuse_a_room(target, tables)
            target.execute(f"TRUNCATE {', '.join(tables)}")
            numbered = _identity_columns(target)
            for table in tables:
                counts[table] = _copy_table(source, target, table)
                column = numbered.get(table)
                if column and counts[table]:
                    target.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                        f" (SELECT max({column}) FROM {table}))"
                    )
            target.execute("COMMIT")
        except BaseException:
            if target.in_transaction:
                target.execute("ROLLBACK")
            raise
        return counts
    finally:
        target.close()


def _identity_columns(target: PgConnection) -> dict[str, str]:
    """Each table's numbering column (an identity): the next rows continue after the
    copied ones."""
    return {
        str(table): str(column)
        for table, column in target.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'"
        ).fetchall()
    }


def _parents_first(source: StoreBase) -> list[str]:
    """The room's tables, each after the tables its foreign keys name."""
    names = [
        str(row[0])
        for row in source.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
        if not str(row[0]).startswith(_SKIPPED)
    ]
    parents = {
        name: {
            str(row[2])
            for row in source.conn.execute(f"PRAGMA foreign_key_list({name})").fetchall()
        }
        - {name}
        for name in names
    }
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= set(ordered)]
        ordered += ready or [n for n in names if n not in ordered]  # a cycle: as they come
    return ordered


def _refuse_a_room(target: PgConnection, tables: list[str]) -> None:
    if any(target.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() for t in tables):
        raise Refused(
            f"{target.where} already holds a room: copy into an empty one, or give"
            " --replace to overwrite it"
        )


def _copy_table(source: StoreBase, target: PgConnection, table: str) -> int:
    cursor = source.conn.execute(f"SELECT * FROM {table}")
    columns = [d[0] for d in cursor.description]
    names = ", ".join(f'"{column}"' for column in columns)  # "offset" is a keyword
    insert = f"INSERT INTO {table} ({names}) VALUES ({placeholders(len(columns))})"
    count = 0
    while batch := cursor.fetchmany(500):
        target.executemany(insert, [tuple(row) for row in batch])
        count += len(batch)
    return count
