"""The parts of the store kept by long-lived objects follow a reopened connection.

A worker reopens the room when its files move (a deleted write-ahead log, a restored
database); an object that had copied the old connection would then write into a closed
one and fail at every pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.store.intercom import IntercomStore
from agent_room.store.timers import TimerStore
from agent_room.turn.store.loops import LoopStore
from agent_room.turn.store.native import NativeStore
from agent_room.turn.store.sqlite import SqliteStore


@pytest.mark.parametrize("part", [TimerStore, IntercomStore, LoopStore, NativeStore])
def test_a_part_of_the_store_uses_the_connection_after_a_reopen(
    tmp_path: Path, part: type[TimerStore | IntercomStore | LoopStore | NativeStore]
) -> None:
    store = SqliteStore(tmp_path / "room")
    kept = part(store)
    (tmp_path / "room" / "room.db-wal").unlink(missing_ok=True)
    (tmp_path / "room" / "room.db-wal").write_bytes(b"")  # another log: the files moved
    old = store.conn
    assert store.reopen_if_moved()
    assert store.conn is not old
    assert kept.conn is store.conn
    assert kept.conn.execute("SELECT 1").fetchone()[0] == 1
    store.close()
