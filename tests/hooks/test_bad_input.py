"""A hook never breaks the agent: bad input exits 0, logs one line, changes nothing."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.hooks import handlers, run_hook
from tests.hooks.conftest import (
    Hook,
    fixture_payload,
    new_session,
    one_logged_line,
    only_the_log_beside,
    room_rows,
)

BIG = b"[" + b"0," * (5 << 20) + b"0]"
"""10 MiB that is no object: more than is read, and still refused with the reason."""


@pytest.mark.parametrize(
    ("event", "payload", "logged"),
    [
        ("Stop", b"", "empty stdin"),
        ("Stop", b"{not json", "invalid JSON"),
        ("Stop", b"[1, 2]", "not a JSON object"),
        ("Stop", json.dumps({"cwd": "/x", "hook_event_name": "Stop"}).encode(), "no session_id"),
        ("Stop", json.dumps({"session_id": 42}).encode(), "not a string"),
        ("Frobnicate", json.dumps(new_session("Frobnicate")).encode(), "unknown event"),
        ("Stop", json.dumps(new_session("SessionStart")).encode(), "is for SessionStart"),
        ("Stop", BIG, "not a JSON object"),
        ("Stop", b"\xff\xfe\x00garbage", "invalid JSON"),
    ],
    ids=["empty", "invalid", "array", "missing", "type", "unknown", "mismatch", "10MB", "binary"],
)
def test_bad_payload_is_logged_and_changes_nothing(
    hook: Hook, seeded: Path, event: str, payload: bytes, logged: str
) -> None:
    before = room_rows(seeded)
    code, out, err = hook(event, payload)
    assert (code, out, err) == (0, None, "")
    assert logged in one_logged_line(seeded)
    assert room_rows(seeded) == before


@pytest.mark.sqlite
def test_locked_room_is_logged_and_the_agent_goes_on(hook: Hook, seeded: Path) -> None:
    before = room_rows(seeded)
    blocker = sqlite3.connect(seeded / "room.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        code, out, err = hook("Stop", fixture_payload("claude-code-2.1.330/hook-Stop.json"))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert (code, out, err) == (0, None, "")
    line = one_logged_line(seeded)
    assert "locked" in line or "busy" in line
    assert room_rows(seeded) == before


@pytest.mark.sqlite
def test_unreachable_database_is_logged(hook: Hook, room_home: Path) -> None:
    room_home.mkdir(mode=0o700)
    (room_home / "room.db").mkdir()
    code, out, err = hook("SessionStart", new_session("SessionStart"))
    assert (code, out, err) == (0, None, "")
    assert "room.db" in one_logged_line(room_home)
    assert only_the_log_beside(room_home, "room.db")
    assert not any((room_home / "room.db").iterdir())


@pytest.mark.sqlite
def test_unsafe_room_is_left_alone(hook: Hook, room_home: Path) -> None:
    room_home.mkdir()
    room_home.chmod(0o777)
    code, out, err = hook("SessionStart", new_session("SessionStart"))
    assert (code, out, err) == (0, None, "")
    assert list(room_home.iterdir()) == []  # not even a log: the room is not ours to write


def test_session_end_for_an_unknown_session_is_harmless(hook: Hook, seeded: Path) -> None:
    before = room_rows(seeded)
    code, out, err = hook("SessionEnd", new_session("SessionEnd", reason="other"))
    assert (code, out, err) == (0, None, "")
    assert not (seeded / "errors.log").exists()  # a session the room never saw: no fault
    assert room_rows(seeded) == before
    room = Room.open({"AGENT_ROOM_HOME": str(seeded)})
    assert [m["name"] for m in room.store.members()] == ["backend"]
    room.close()


def test_an_unexpected_fault_exits_0_and_is_logged(
    seeded: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last-resort handler: a bug in the room never reaches the agent as a failure."""

    before = room_rows(seeded)

    def broken(*_args: object) -> None:
        raise RuntimeError("a bug in the room")

    monkeypatch.setattr(handlers, "handle", broken)
    stdin = io.BytesIO(json.dumps(fixture_payload("claude-code-2.1.330/hook-Stop.json")).encode())
    code = run_hook(["Stop"], {"AGENT_ROOM_HOME": str(seeded)}, stdin)
    assert code == 0
    assert capsys.readouterr() == ("", "")
    assert "internal error: RuntimeError: a bug in the room" in one_logged_line(seeded)
    assert room_rows(seeded) == before
