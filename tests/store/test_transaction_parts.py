"""A write transaction opened inside another is a part of it (a ``SAVEPOINT``): undone
alone when it fails, committed with the whole, and counted once with it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite import SqliteStore

_PUT = "INSERT INTO settings (key, value) VALUES ($1, $2)"


def _keys(store: SqliteStore) -> list[str]:
    rows = store.conn.execute("SELECT key FROM settings ORDER BY key").fetchall()
    return [str(r[0]) for r in rows]


@pytest.fixture
def store(room_home: Path) -> Iterator[SqliteStore]:
    opened = SqliteStore(room_home)
    yield opened
    opened.close()


class _Refused(Exception):
    """What a part raises, and the caller catches."""


def _refused_part(store: SqliteStore, key: str) -> None:
    """A part that writes ``key``, then fails."""
    with write_transaction(store.conn) as part:
        part.execute(_PUT, (key, "1"))
        raise _Refused


def _whole_then_fault(store: SqliteStore) -> None:
    """A transaction with a part that succeeded, failing after it."""
    with write_transaction(store.conn) as conn:
        with write_transaction(store.conn) as part:
            part.execute(_PUT, ("part", "1"))
        conn.execute(_PUT, ("whole", "1"))
        raise _Refused


def test_a_part_that_fails_is_undone_alone_and_the_rest_commits(store: SqliteStore) -> None:
    with write_transaction(store.conn) as conn:
        conn.execute(_PUT, ("before", "1"))
        with contextlib.suppress(_Refused):
            _refused_part(store, "undone")
        with write_transaction(store.conn) as part:
            part.execute(_PUT, ("after", "1"))
    assert _keys(store) == ["after", "before"]
    assert not store.conn.in_transaction


def test_a_fault_that_leaves_the_whole_undoes_every_part(store: SqliteStore) -> None:
    with pytest.raises(_Refused):
        _whole_then_fault(store)
    assert _keys(store) == []
    assert not store.conn.in_transaction
    with write_transaction(store.conn) as conn:  # the connection goes on
        conn.execute(_PUT, ("next", "1"))
    assert _keys(store) == ["next"]


@pytest.mark.sqlite
def test_parts_move_the_change_count_once_and_bookkeeping_or_undone_ones_not_at_all(
    store: SqliteStore,
) -> None:
    start = store.changes()
    with write_transaction(store.conn) as conn:
        for key in ("a", "b"):
            with write_transaction(store.conn) as part:
                part.execute(_PUT, (key, "1"))
        conn.execute(_PUT, ("c", "1"))
    moved = store.changes()
    assert moved == start + 1  # type: ignore[operator]
    with write_transaction(store.conn):
        with write_transaction(store.conn, bookkeeping=True) as part:
            part.execute(_PUT, ("place", "1"))
        with contextlib.suppress(_Refused):
            _refused_part(store, "undone")
    assert store.changes() == moved
    assert "place" in _keys(store)
