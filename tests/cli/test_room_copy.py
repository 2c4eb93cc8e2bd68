"""``agent-room room copy``: a SQLite room, audit log and all, moved into PostgreSQL."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.conftest import Cli
from tests.pgcluster import Cluster


@pytest.fixture
def sqlite_room(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A SQLite room with members, messages, a handover decided and a link, whatever
    engine this pass gives the other tests."""
    monkeypatch.delenv("AGENT_ROOM_DATABASE", raising=False)
    home = tmp_path / "old"
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    for name in ("api", "web"):
        room.join(name)
    for n in range(5):
        room.send("api", "web", f"message {n}")
    room.approve(room.send_handover("api", "web", body="take it"))
    room.close()
    return home


def _dump(room: Room) -> list[tuple[object, ...]]:
    found = room.store.conn.execute(
        "SELECT id, kind, actor, subject, message_id FROM events ORDER BY id"
    ).fetchall()
    return [tuple(row) for row in found]


def test_copy_moves_everything_and_the_room_goes_on(
    sqlite_room: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = pg_cluster.new_room(f"room_{time.monotonic_ns()}")
    cli = Cli(sqlite_room)
    env = pg_cluster.env()
    copied = cli("room", "copy", "--to", url, env=env)
    assert copied.code == 0, copied.err
    assert "7 messages" in copied.err  # five, the handover and its decision's notice
    old = Room.open({"AGENT_ROOM_HOME": str(sqlite_room)})
    monkeypatch.setenv("AGENT_ROOM_DATABASE", url)
    new = Room.open({"AGENT_ROOM_HOME": str(sqlite_room)})
    try:
        assert new.store.engine == "postgresql"
        assert _dump(new) == _dump(old)
        assert [m["body"] for m in new.history(20)] == [m["body"] for m in old.history(20)]
        assert new.send("web", "api", "after the move") == 8  # ids go on where they stopped
    finally:
        old.close()
        new.close()
        monkeypatch.delenv("AGENT_ROOM_DATABASE")
    again = cli("room", "copy", "--to", url, env=env)
    assert again.code != 0
    assert "already holds a room" in again.err
    assert cli("room", "copy", "--to", url, "--replace", env=env).code == 0


def test_a_password_on_the_command_line_is_refused(sqlite_room: Path) -> None:
    refused = Cli(sqlite_room)("room", "copy", "--to", "postgresql://room:s3cret@db/agentroom")
    assert refused.code != 0
    (line,) = refused.err.splitlines()
    assert "pgpass" in line
    assert "s3cret" not in line
