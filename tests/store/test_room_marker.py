"""A room that had data and now has none is refused; a new room is made only on purpose.

The room directory holds ``room.initialised`` from the moment its database first has a
schema: an empty or missing database next to it is a loss, not a first run.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.store.db import connect
from agent_room.turn.store.home import MARKER
from tests.conftest import Cli

pytestmark = pytest.mark.sqlite


def _room_with_data(cli: Cli) -> None:
    assert cli("join", "backend").code == 0
    assert cli("join", "frontend").code == 0
    for n in range(5):
        assert cli("send", "@frontend", f"message {n}", name="backend").code == 0


def test_a_first_run_makes_the_room_and_marks_it(room_home: Path) -> None:
    connect(room_home).close()
    marker = room_home / MARKER
    assert marker.is_file()
    assert oct(marker.stat().st_mode & 0o777) == "0o600"


def test_a_database_truncated_to_nothing_is_refused(cli: Cli, room_home: Path) -> None:
    _room_with_data(cli)
    os.truncate(room_home / "room.db", 0)
    result = cli("who")
    assert result.code != 0
    assert "Traceback" not in result.err
    (line,) = result.err.strip().splitlines()
    assert "room.db is empty" in line
    assert MARKER in line  # how to start anew on purpose
    assert os.path.getsize(room_home / "room.db") == 0  # nothing was made in its place
    assert cli("send", "@frontend", "lost?", name="backend").code != 0


def test_a_deleted_database_is_refused(cli: Cli, room_home: Path) -> None:
    _room_with_data(cli)
    (room_home / "room.db").unlink()
    with pytest.raises(RoomUnavailable, match="is empty"):
        connect(room_home)


def test_removing_the_marker_starts_an_empty_room_on_purpose(cli: Cli, room_home: Path) -> None:
    _room_with_data(cli)
    os.truncate(room_home / "room.db", 0)
    (room_home / MARKER).unlink()
    assert cli("who").code == 0
    assert (room_home / MARKER).is_file()


def test_a_room_made_before_the_marker_gets_one(room_home: Path) -> None:
    Room.open({"AGENT_ROOM_HOME": str(room_home)}).close()
    (room_home / MARKER).unlink()
    connect(room_home).close()  # an existing room with data: marked on its next open
    assert (room_home / MARKER).is_file()
    os.truncate(room_home / "room.db", 0)
    with pytest.raises(RoomUnavailable, match="is empty"):
        connect(room_home)


def test_an_empty_file_beside_no_marker_is_a_first_run(tmp_path: Path) -> None:
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    fd = os.open(home / "room.db", os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    conn = connect(home)
    assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
    conn.close()
    assert sqlite3.connect(home / "room.db").execute("PRAGMA user_version").fetchone()[0] > 0
