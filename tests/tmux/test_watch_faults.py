"""`agent-room watch` under database faults: it says what is wrong, waits, and goes on.

Two real watch processes (the lease holder and a stand-by) deliver into a real tmux pane
while the room's write lock is held past the busy timeout, the file system fills up, or
the write-ahead log is deleted under them.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import libtmux
import pytest

from agent_room.room.service import Room
from agent_room.workers.memory import memory_lease
from tests.conftest import Cli
from tests.faults import corrupt_data_pages, tiny_disk, write_lock_held
from tests.poll import wait_for
from tests.tmux.test_delivery_tmux import screen, start_agent

LOCK_SECONDS = 13.0
"""Longer than the room's busy timeout (10 s): every worker's writes fail meanwhile."""


class Watchers:
    """Two ``agent-room watch`` processes on one room, their stderr kept in files."""

    def __init__(self, home: Path, logs: Path) -> None:
        env = {**os.environ, "AGENT_ROOM_HOME": str(home)}
        self.logs = [logs / f"watch{n}.err" for n in range(2)]
        self.procs = []
        for log in self.logs:
            with open(log, "wb") as err:
                self.procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "agent_room", "watch"], env=env, stderr=err
                    )
                )

    def running(self) -> bool:
        return all(proc.poll() is None for proc in self.procs)

    def said(self) -> str:
        return "".join(log.read_text() for log in self.logs)

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(timeout=15)


@pytest.fixture
def watched(
    server: libtmux.Server, room_home: Path, tmp_path: Path
) -> Iterator[tuple[Room, libtmux.Pane, Watchers]]:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.join("backend")
    pane = start_agent(server, room_home, "frontend")
    watchers = Watchers(room_home, tmp_path)
    wait_for(lambda: room.store.lease("deliverer") and room.store.lease("injector"))
    yield room, pane, watchers
    watchers.stop()
    room.close()


def _delivered(room: Room, pane: libtmux.Pane, body: str) -> None:
    mid = room.send("backend", "frontend", body)
    wait_for(lambda: body in screen(pane), timeout=30)
    wait_for(lambda: room.store.message(mid)["status"] == "delivered")  # type: ignore[index]
    # the turn ends (its Stop hook writes too): the agent is idle before the next fault
    wait_for(lambda: next(s for s in room.who() if s["name"] == "frontend")["state"] == "idle")


def _renewed_after(room: Room, lease: str, moment: float) -> bool:
    row = room.store.lease(lease)
    return row is not None and float(row["expires_at"]) > moment + 1.0


@pytest.mark.sqlite
def test_watch_outlives_a_write_lock_held_past_the_busy_timeout(
    room_home: Path, watched: tuple[Room, libtmux.Pane, Watchers]
) -> None:
    room, pane, watchers = watched
    _delivered(room, pane, "before the lock")
    with write_lock_held(room_home / "room.db", LOCK_SECONDS):
        time.sleep(LOCK_SECONDS - 1)
        assert watchers.running()
    released = time.time()
    wait_for(lambda: "room is busy" in watchers.said() or "locked" in watchers.said())
    assert watchers.running(), watchers.said()
    assert "Traceback" not in watchers.said()
    _delivered(room, pane, "after the lock")
    # the injector and the memory worker are back at work too: their leases move on
    for lease in ("deliverer", "injector", memory_lease(room.store.host)):
        wait_for(lambda lease=lease: _renewed_after(room, lease, released))  # type: ignore[misc]
    assert watchers.running()


def test_watch_outlives_a_full_disk(
    server: libtmux.Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with tiny_disk(tmp_path) as disk:
        home = disk.where / "room"
        monkeypatch.setenv("AGENT_ROOM_HOME", str(home))
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        room.join("backend")
        pane = start_agent(server, home, "frontend")
        watchers = Watchers(home, tmp_path)
        try:
            wait_for(lambda: room.store.lease("deliverer"))
            _delivered(room, pane, "before the disk filled")
            disk.fill()
            # SQLite's own words (the room's path, in the first line, holds the test's name)
            wait_for(lambda: "disk is full" in watchers.said(), timeout=20)
            time.sleep(2)  # a few more passes (and lease renewals) on the full disk
            assert watchers.running(), watchers.said()
            # one stops while the disk is full: its lease cannot be released, it exits cleanly
            first, second = watchers.procs
            first.terminate()
            assert first.wait(timeout=30) == 0, watchers.said()
            disk.free()
            _delivered(room, pane, "after the disk emptied")  # the other one took over
            assert second.poll() is None, watchers.said()
            assert "Traceback" not in watchers.said()
            assert "again" in watchers.said()  # it says when it is back at work
        finally:
            watchers.stop()
            room.close()


@pytest.mark.sqlite
def test_a_deleted_write_ahead_log_is_noticed_and_the_room_reopened(
    room_home: Path, cli: Cli, watched: tuple[Room, libtmux.Pane, Watchers]
) -> None:
    room, pane, watchers = watched
    _delivered(room, pane, "before the log went")
    room.close()  # only the watchers keep the room open, as when no agent is running
    (room_home / "room.db-wal").unlink()

    def sent() -> bool:
        return cli("send", "@frontend", "after the log went", name="backend").code == 0

    wait_for(sent, timeout=20, step=0.5)  # the watchers reopen the room: writes work again
    try:
        wait_for(lambda: "after the log went" in screen(pane), timeout=30)
    except AssertionError as exc:  # say what the watchers said, and where the message is
        raise AssertionError(f"{exc}\n{watchers.said()}\n{_states(room_home)}") from None
    reopened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        bodies = [m["body"] for m in reopened.history(10)]
        assert "before the log went" in bodies  # nothing written before was lost
    finally:
        reopened.close()
    assert watchers.running(), watchers.said()


def _states(home: Path) -> str:
    """The latest messages and nudges, read by a process of its own."""
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
        "print(c.execute('SELECT id, status, body FROM messages ORDER BY id DESC LIMIT 3')"
        ".fetchall()); print(c.execute('SELECT * FROM nudges ORDER BY id DESC LIMIT 2')"
        ".fetchall()); print(c.execute('PRAGMA integrity_check').fetchall())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(home / "room.db")],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr


@pytest.mark.sqlite
def test_watch_outlives_damaged_pages_until_the_room_is_restored(
    room_home: Path, tmp_path: Path, watched: tuple[Room, libtmux.Pane, Watchers]
) -> None:
    room, pane, watchers = watched
    _delivered(room, pane, "before the damage")
    backup = sqlite3.connect(tmp_path / "backup.db")
    assert isinstance(room.store.conn, sqlite3.Connection)  # a SQLite room's own file
    room.store.conn.backup(backup)
    corrupt_data_pages(room_home / "room.db")
    with contextlib.suppress(sqlite3.DatabaseError):
        room.send("backend", "frontend", "into the damage")  # every cache reads again
    wait_for(lambda: "malformed" in watchers.said(), timeout=20)
    time.sleep(1)
    assert watchers.running(), watchers.said()
    # the operator restores the room in place (what `sqlite3 room.db ".restore ..."` does)
    live = sqlite3.connect(room_home / "room.db")
    backup.backup(live)
    live.close()
    backup.close()
    _delivered(room, pane, "after the restore")
    assert watchers.running(), watchers.said()
    assert "Traceback" not in watchers.said()
