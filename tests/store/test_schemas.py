"""The room's two schemas, SQLite's and PostgreSQL's, written out each for its engine,
stay in step: the same migrations, the same tables with the same columns, the same
indexes, and every statement of the store runs on both as written."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from agent_room.turn.store import postgres_schema, schema
from agent_room.turn.store.postgres import connect as connect_postgres
from agent_room.turn.store.sqlite import SqliteStore
from tests.pgcluster import Cluster

_SQLITE_ONLY = ("memory_fts",)
"""SQLite's full-text table and its shadow tables (PostgreSQL's is an index)."""

_POSTGRESQL_ONLY = ("agent_room_schema",)
"""PostgreSQL's schema version (SQLite keeps it in ``PRAGMA user_version``)."""


def test_each_migration_is_written_for_both_engines() -> None:
    assert len(postgres_schema.MIGRATIONS) == len(schema.MIGRATIONS) == schema.SCHEMA_VERSION


def _sqlite_tables(home: Path) -> dict[str, set[str]]:
    SqliteStore(home).close()
    conn = sqlite3.connect(home / "room.db")
    try:
        names = [
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(row[0]).startswith(("sqlite_", *_SQLITE_ONLY))
        ]
        return {
            name: {str(column[1]) for column in conn.execute(f"PRAGMA table_info({name})")}
            for name in names
        }
    finally:
        conn.close()


def _sqlite_indexes(home: Path) -> set[str]:
    conn = sqlite3.connect(home / "room.db")
    try:
        return {
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
    finally:
        conn.close()


def test_both_engines_make_the_same_tables_columns_and_indexes(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    home = tmp_path / "room"
    expected = _sqlite_tables(home)
    conn = connect_postgres(pg_cluster.new_room(f"room_{os.urandom(6).hex()}"))
    try:
        found: dict[str, set[str]] = {}
        for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema()"
        ).fetchall():
            if table not in _POSTGRESQL_ONLY:
                found.setdefault(str(table), set()).add(str(column))
        indexes = {
            str(row[0])
            for row in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                " AND indexname NOT IN (SELECT conname FROM pg_constraint)"  # keys' own
            ).fetchall()
        }
    finally:
        conn.close()
    assert found == expected
    # PostgreSQL's full-text index stands for SQLite's table of the same name
    assert indexes == _sqlite_indexes(home) | {"memory_fts"}


def test_a_statement_in_sqlites_own_spelling_fails_on_sqlite_too(tmp_path: Path) -> None:
    """``?`` and ``:name`` parameters, which PostgreSQL does not take, are refused by the
    SQLite room as well: a statement that runs on one engine runs on both."""
    store = SqliteStore(tmp_path / "room")
    try:
        assert store.conn.execute("SELECT $1 + $2", (1, 2)).fetchone()[0] == 3
        with pytest.raises(sqlite3.ProgrammingError):
            store.conn.execute("SELECT ?", (1,))
        with pytest.raises(TypeError, match="in order"):
            store.conn.execute("SELECT :n", {"n": 1})  # type: ignore[arg-type]
    finally:
        store.close()
