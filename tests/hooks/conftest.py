"""Running ``agent-room hook`` as the real client does: a process, a payload on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agent_room.room.service import Room
from agent_room.turn.store.sqlite import SqliteStore
from tests.conftest import FIXTURES


def fixture_payload(name: str) -> dict[str, Any]:
    """A captured payload, e.g. ``claude-code-2.1.330/hook-Stop.json``."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


class Hook:
    """Fires hooks at the test's room, as a process the way Claude Code does."""

    def __init__(self, home: Path, agent_pid: int) -> None:
        self.home = home
        self.agent_pid = agent_pid

    def __call__(
        self,
        event: str,
        payload: Mapping[str, Any] | bytes | None = None,
        *,
        env: Mapping[str, str] | None = None,
        pid: int | None = None,
    ) -> tuple[int, dict[str, Any] | None, str]:
        base = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home.parent),
            "AGENT_ROOM_HOME": str(self.home),
            "CLAUDE_PID": str(pid if pid is not None else self.agent_pid),
        }
        base.update(env or {})
        data = payload if isinstance(payload, bytes) else json.dumps(payload or {}).encode()
        proc = subprocess.run(
            [sys.executable, "-m", "agent_room", "hook", event],
            input=data,
            capture_output=True,
            env=base,
            timeout=30,
            check=False,
        )
        out = proc.stdout.decode()
        return proc.returncode, (json.loads(out) if out.strip() else None), proc.stderr.decode()


_TABLES = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    "postgresql": "SELECT table_name FROM information_schema.tables"
    " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
}


def room_rows(home: Path) -> dict[str, list[str]]:
    """Every row of every table of the room at ``home``, on either engine: what a hook
    given bad input must leave as it found it."""
    store = SqliteStore(home)
    try:
        tables = [str(r[0]) for r in store.conn.execute(_TABLES[store.engine]).fetchall()]
        return {
            table: sorted(repr(tuple(r)) for r in store.conn.execute(f"SELECT * FROM {table}"))
            for table in tables
        }
    finally:
        store.close()


@pytest.fixture
def seeded(hook: Hook, room_home: Path) -> Path:
    """A room with one registered session, so that 'nothing changed' means something."""
    code, _, err = hook(
        "SessionStart",
        fixture_payload("claude-code-2.1.330/hook-SessionStart-startup.json"),
        env={"AGENT_ROOM_NAME": "backend"},
    )
    assert (code, err) == (0, "")
    assert room_rows(room_home)["sessions"]
    return room_home


def one_logged_line(home: Path) -> str:
    """The error log's one line (the test fails on none or more)."""
    (line,) = (home / "errors.log").read_text().splitlines()
    return line


def only_the_log_beside(home: Path, *kept: str) -> bool:
    """Whether the room folder holds nothing but the error log and ``kept``: a hook
    that could not open the room made nothing else in it."""
    return sorted(p.name for p in home.iterdir()) == sorted(("errors.log", *kept))


@pytest.fixture
def hook(room_home: Path, agent_proc: subprocess.Popen[bytes]) -> Hook:
    """Fire hooks at the test's room for the stand-in agent process."""
    return Hook(room_home, agent_proc.pid)


def new_session(event: str, **fields: Any) -> dict[str, Any]:
    """A payload of the real shape with a fresh session id."""
    base = fixture_payload("claude-code-2.1.330/hook-SessionStart-startup.json")
    base.update({"session_id": str(uuid.uuid4()), "hook_event_name": event})
    base.update(fields)
    return base


def frontend_and_backend(hook: Hook, room_home: Path) -> tuple[Room, dict[str, Any]]:
    """@frontend registered by its hook (its SessionStart payload returned) and
    @backend joined by hand, in an open room."""
    front = new_session("SessionStart")
    hook("SessionStart", front, env={"AGENT_ROOM_NAME": "frontend"})
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.join("backend")
    return room, front
