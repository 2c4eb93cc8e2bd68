"""Fixtures of the MCP tier: the room's server, serving in a thread of the test."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.mcp.serve import Serving
from agent_room.room.service import Room


@pytest.fixture
def served(room_home: Path, room: Room) -> Iterator[Serving]:
    """The room's server for the test's room, until the test ends."""
    stop = threading.Event()
    serving = Serving(str(room_home), {"AGENT_ROOM_HOME": str(room_home)})
    thread = serving.start(stop)
    assert serving.serving.wait(20)
    yield serving
    stop.set()
    thread.join(timeout=10)
