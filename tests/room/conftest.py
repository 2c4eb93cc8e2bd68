"""Fixtures of the room tier: a room with three registered agent sessions, a clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_room.room.service import Room


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def linked(room_home: Path, clock: Clock) -> Room:
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    opened.clock = clock
    for name in ("a", "b", "c"):
        register(opened, name)
    return opened


def register(room: Room, name: str, session_id: str | None = None, **facts: Any) -> None:
    room.store.register(
        {"session_id": session_id or f"s-{name}", "state": "idle", **facts},
        wanted=name,
        explicit=True,
        at=room.clock(),
        alive=lambda *_: True,
    )
