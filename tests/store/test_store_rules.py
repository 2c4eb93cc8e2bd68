"""Rules of the store held on both engines in the plain pass: a mutation of any of them
used to pass the SQLite run and fail only the PostgreSQL one, or none at all.

- the status line counts only the sessions still in the room (``store.attention``);
- one writer at a time (``write_transaction``: SQLite's ``BEGIN IMMEDIATE``,
  PostgreSQL's advisory lock of the room), a second one waiting up to its timeout;
- a ``LIMIT $1`` takes the number bound to it, and ``-1`` (SQLite's "no limit", which
  PostgreSQL spells ``NULL``) means every row.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agent_room.core.memory import Item
from agent_room.room.service import Room
from agent_room.store import memory
from agent_room.store.attention import facts
from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.store.attention import status_counts
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite import SqliteStore
from tests.pgcluster import Cluster


def _waiting(room: Room, name: str) -> None:
    """A session of ``name`` in a permission dialog, as its hooks register it."""
    room.store.register(
        {"session_id": f"s-{name}", "cwd": "/w", "state": "waiting"},
        wanted=name,
        explicit=True,
        at=time.time(),
        alive=lambda *_a: True,
    )


def test_the_status_line_leaves_out_a_session_that_left_while_waiting(room: Room) -> None:
    _waiting(room, "api")
    _waiting(room, "web")
    assert status_counts(room.store.conn).waiting == 2
    room.leave("web")  # still 'waiting' in its row: it never answered the dialog
    assert (
        room.store.conn.execute("SELECT state FROM sessions WHERE name = 'web'").fetchone()[0]
        == "waiting"
    )
    assert status_counts(room.store.conn).waiting == 1
    assert [w[0] for w in facts(room.store.conn, time.time()).waiting] == ["api"]


def test_a_second_writer_waits_for_the_first(
    either_engine: Cluster | None, room_home: Path
) -> None:
    del either_engine
    first = SqliteStore(room_home)
    second = SqliteStore(room_home, timeout=0.3)
    try:
        with write_transaction(first.conn) as conn:
            conn.execute("SELECT count(*) FROM sessions").fetchone()  # read, then write
            with pytest.raises(RoomUnavailable, match="busy"), write_transaction(second.conn):
                pass
        with write_transaction(second.conn):  # free once the first has committed
            pass
    finally:
        first.close()
        second.close()


def test_a_second_writer_waits_its_timeout_for_the_first_and_then_writes(
    either_engine: Cluster | None, room_home: Path
) -> None:
    """Busy is the end of a wait, not the first answer: a hook that meets another
    writer waits for it (up to its timeout) rather than losing its event."""
    del either_engine
    first = SqliteStore(room_home)
    second = SqliteStore(room_home, timeout=30)
    wrote: list[str] = []

    def write() -> None:
        with write_transaction(second.conn) as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES ('second', 'in')")
        wrote.append("second")

    waiting = threading.Thread(target=write)
    try:
        with write_transaction(first.conn) as conn:
            conn.execute("INSERT INTO settings (key, value) VALUES ('first', 'in')")
            waiting.start()
            waiting.join(0.5)
            assert waiting.is_alive()  # held at BEGIN, not refused
            wrote.append("first")
        waiting.join(30)
        assert not waiting.is_alive()
        assert wrote == ["first", "second"]
        keys = first.conn.execute("SELECT key FROM settings WHERE value = 'in' ORDER BY key")
        assert [r[0] for r in keys.fetchall()] == ["first", "second"]
    finally:
        waiting.join(30)
        first.close()
        second.close()


def test_a_limit_takes_the_number_bound_to_it(
    either_engine: Cluster | None, room_home: Path
) -> None:
    del either_engine
    store = SqliteStore(room_home)
    try:
        memory.remember(
            store,
            "s-api",
            path="/t.jsonl",
            inode=1,
            offset=10,
            items=[Item("said", f"item {i}") for i in range(1, 6)],
            problem=None,
            at=1.0,
        )
        texts = [r["text"] for r in memory.items(store, "s-api", limit=2)]
        assert texts == ["item 4", "item 5"]
        every = [r["text"] for r in memory.items(store, "s-api")]  # LIMIT -1
        assert every == [f"item {i}" for i in range(1, 6)]
        assert [r["text"] for r in memory.items(store, "s-api", limit=0)] == []
        store.join("a", pane=None, agent="claude", at=1.0)
        store.join("b", pane=None, agent="claude", at=1.0)
        for n in range(4):
            store.add_message(kind="chat", sender="a", recipient="b", body=f"m{n}", at=2.0 + n)
        assert [m["body"] for m in store.history(3)] == ["m1", "m2", "m3"]
    finally:
        store.close()
