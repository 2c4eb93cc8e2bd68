"""The room directory is private to its user, and refused when it is not."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomUnavailable, UnsafeRoom
from agent_room.turn.store.db import connect
from agent_room.turn.store.home import ensure_room_dir, inside_room, room_home
from agent_room.turn.store.schema import SCHEMA_VERSION
from tests.conftest import require_tool


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_default_home_is_under_the_users_home() -> None:
    assert room_home({"HOME": "/home/x"}) == "/home/x/.agent-room"
    assert room_home({"HOME": "/home/x", "AGENT_ROOM_HOME": "/r"}) == "/r"


def test_new_room_is_0700_with_0600_files(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        room = Room.open({"AGENT_ROOM_HOME": str(tmp_path / "a" / "room")})
        room.join("one")
        room.join("two")
        room.send("one", "two", "hi")
        files = list((tmp_path / "a" / "room").iterdir())
        assert _mode(tmp_path / "a" / "room") == 0o700
        assert files
        for path in files:
            assert _mode(path) == 0o600, path
        room.close()
    finally:
        os.umask(old)


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722, 0o702])
def test_writable_by_others_is_refused(tmp_path: Path, mode: int) -> None:
    home = tmp_path / "room"
    home.mkdir()
    home.chmod(mode)
    with pytest.raises(UnsafeRoom, match="writable by others"):
        ensure_room_dir(home)


def test_readable_by_others_is_tightened(tmp_path: Path) -> None:
    home = tmp_path / "room"
    home.mkdir(mode=0o755)
    ensure_room_dir(home)
    assert _mode(home) == 0o700


def test_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    require_tool(os.geteuid() == 0, "root (to give a directory to another owner)")
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    os.chown(home, 12345, 12345)
    with pytest.raises(UnsafeRoom, match="owned by uid 12345"):
        ensure_room_dir(home)


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "room").write_text("")
    with pytest.raises(UnsafeRoom, match="not a directory"):
        ensure_room_dir(tmp_path / "room")


def test_planted_symlink_database_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.db"
    (home / "room.db").symlink_to(target)
    with pytest.raises(UnsafeRoom, match="symlink"):
        connect(home)
    assert not target.exists()


def test_path_escape_is_refused(tmp_path: Path) -> None:
    assert inside_room(tmp_path, Path("a/b")) == (tmp_path / "a" / "b").resolve()
    with pytest.raises(UnsafeRoom):
        inside_room(tmp_path, Path("../outside"))


def test_schema_is_versioned_and_newer_rooms_are_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "room")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(RoomUnavailable, match="newer"):
        connect(tmp_path / "room")


def test_migrations_run_forward_from_an_empty_database(tmp_path: Path) -> None:
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    fd = os.open(home / "room.db", os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    conn = connect(home)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "handovers", "events"} <= tables
    conn.close()


def test_corrupt_database_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    fd = os.open(home / "room.db", os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"this is not a database" * 100)
    os.close(fd)
    with pytest.raises(RoomUnavailable, match="cannot be used"):
        connect(home)
