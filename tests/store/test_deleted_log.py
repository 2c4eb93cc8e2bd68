"""A write-ahead log deleted under open connections: a connection that still writes to
the deleted one after another has moved the room on to a new log would leave the room
unreadable for every process started since (hooks, send), and its frames, read back
through the wrong file, could damage the database."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomGone, RoomUnavailable
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.turn.store.sqlite_base import _index_holds

pytestmark = pytest.mark.sqlite

NEWCOMER = """
import sys, time
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.turn.store.sqlite_base import _index_holds
store = SqliteStore(sys.argv[1])
store.logevent("newcomer", "test", at=time.time())
print(store.conn.execute("SELECT count(*) FROM events WHERE kind = 'newcomer'").fetchone()[0])
"""


def _newcomer(home: Path) -> subprocess.CompletedProcess[str]:
    """A process started after the fault (a hook, a send) writes and reads the room."""
    return subprocess.run(
        [sys.executable, "-c", NEWCOMER, str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_connection_left_on_a_deleted_log_writes_nothing_more(tmp_path: Path) -> None:
    home = tmp_path / "room"
    stale, moving = SqliteStore(home), SqliteStore(home)
    try:
        for n in range(20):  # in the log, not yet in the database file
            stale.logevent("before", "test", at=float(n))
        (home / "room.db-wal").unlink()
        assert moving.reopen_if_moved()  # saves the old log, goes on with a new one
        assert _newcomer(home).stdout.strip() == "1"
        # a pass that began before the log went (or a reopen put off) writes through the
        # old connection: refused, or the room is lost to every process started since
        with (
            pytest.raises(RoomUnavailable, match="write-ahead log"),
            write_transaction(stale.conn, bookkeeping=True) as conn,  # pages the others left
        ):
            conn.execute("INSERT INTO settings (key, value) VALUES ('stale', 'x')")
        newcomer = _newcomer(home)
        assert newcomer.returncode == 0, newcomer.stderr
        assert newcomer.stdout.strip() == "2"
        assert stale.reopen_if_moved()  # its next pass: the room reopened
        stale.logevent("after", "test", at=100.0)
        kinds = [r[0] for r in moving.conn.execute("SELECT kind FROM events WHERE actor = 'test'")]
        assert kinds == ["before"] * 20 + ["newcomer"] * 2 + ["after"]
        assert moving.conn.execute("SELECT * FROM settings WHERE key = 'stale'").fetchone() is None
        assert moving.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        stale.close()
        moving.close()


def test_a_log_another_process_has_moved_on_from_is_not_saved_over_the_room(
    tmp_path: Path,
) -> None:
    """The stale connection's own reopen saves what its deleted log holds only while the
    room's index still describes that log: once a newcomer started a new one (the old
    one's frames were all in the database already), the old frames sit where the index
    now means the new log's, and copying them would write stale pages over new ones."""
    home = tmp_path / "room"
    stale = SqliteStore(home)
    try:
        for n in range(20):
            stale.logevent("before", "test", at=float(n))
        (home / "room.db-wal").unlink()
        # its reopen found a reader in the way: the log copied, the room not yet moved on
        assert stale.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[0] == 0
        for count in ("1", "2", "3"):  # newcomers go on, in a new log
            assert _newcomer(home).stdout.strip() == count
        assert stale.reopen_if_moved()
        newcomer = _newcomer(home)
        assert newcomer.returncode == 0, newcomer.stderr
        assert newcomer.stdout.strip() == "4"
        assert stale.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        kinds = [r[0] for r in stale.conn.execute("SELECT kind FROM events WHERE actor = 'test'")]
        assert kinds == ["before"] * 20 + ["newcomer"] * 4
    finally:
        stale.close()


LOCKED = """
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
# SQLite's "this index is in use" byte: a process that finds no lock there starts afresh
query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0)
print(struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, query))[0] != fcntl.F_UNLCK)
"""


def test_looking_at_the_index_keeps_the_locks_held_on_it(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops every POSIX lock the process holds on it:
    the index is read through SQLite's own, or another process would take the index
    for unused, start it afresh under this one's mapping (a bus error) and lose writes."""
    home = tmp_path / "room"
    store = SqliteStore(home)
    try:
        store.logevent("before", "test", at=1.0)
        shm = str(home / "room.db-shm")

        def in_use() -> str:
            check = subprocess.run(
                [sys.executable, "-c", LOCKED, shm], capture_output=True, text=True, check=True
            )
            return check.stdout.strip()

        assert in_use() == "True"
        log = getattr(store.conn, "log", None)
        assert log is not None
        assert _index_holds(str(home), log[1])
        assert in_use() == "True"
    finally:
        store.close()


def test_a_room_removed_under_a_process_is_never_made_anew_by_it(tmp_path: Path) -> None:
    """Only a command that starts the room makes it: a worker's store opened again
    (``create=False``), or one reopened on a log that is gone, meets ``RoomGone`` and
    leaves no empty room in the place of the removed one."""
    home = tmp_path / "room"
    store = SqliteStore(home)
    try:
        store.logevent("before", "test", at=1.0)
        shutil.rmtree(home)
        with pytest.raises(RoomGone, match="is gone"):
            store.reopen_if_moved()
        assert not home.exists()
        with pytest.raises(RoomGone, match="is gone"):
            SqliteStore(home, create=False)
        assert not home.exists()
        with pytest.raises(RoomGone):
            Room.open({"AGENT_ROOM_HOME": str(home)}, long_lived=True, create=False)
        assert not home.exists()
    finally:
        store.close()
    SqliteStore(home).close()  # a command that starts the room makes it
    assert (home / "room.db").exists()
