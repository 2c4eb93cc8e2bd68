"""Fixtures of the console's tests: a seeded room, a fake multiplexer, the app factory."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from agent_room.core.snapshot import RoomSnapshot
from agent_room.room.enter import Where
from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.ui.app import RoomConsole, make_app
from agent_room.ui.settings import ConsoleSettings
from agent_room.ui.widgets.handovers import HandoverQueue
from agent_room.ui.widgets.sessions import SessionsTable
from tests.fakes import FakeMux
from tests.ui.seed import AliveProbe, FrozenClock, seed_room

SOCKET = "/tmp/tmux-1000/default"
"""The tmux server the seeded agents registered from."""
SHOWN_HOME = "/home/operator/.agent-room"
"""The room path the snapshot pictures show (never the test's temporary directory)."""


@pytest.fixture
def anyio_backend() -> str:
    """Textual runs on asyncio."""
    return "asyncio"


@pytest.fixture
def seeded(room_home: Path) -> Iterator[tuple[Room, FrozenClock]]:
    """The seeded room (see ``tests/ui/seed.py``) and its clock."""
    room, clock = seed_room(room_home)
    yield room, clock
    room.close()


@pytest.fixture
def mux() -> FakeMux:
    """A fake multiplexer."""
    return FakeMux()


def live_settings(home: Path, **changes: object) -> ConsoleSettings:
    """Settings for flow tests: the reader runs; no file watcher, deliverer or liveness."""
    values: dict[str, object] = {
        "home": str(home),
        "watch": False,
        "deliver": False,
        "background": False,  # the test's console takes the leases itself
        "liveness": False,
        "utc": True,
        "restart_delay": 0.0,
        "safety_interval": 30.0,
        "theme_dirs": (),
    }
    values.update(changes)
    return ConsoleSettings.validate(values)


@pytest.fixture
def console(
    seeded: tuple[Room, FrozenClock], room_home: Path, mux: FakeMux
) -> Callable[..., RoomConsole]:
    """Build the console on the seeded room, inside tmux on the agents' server."""
    _room, clock = seeded

    def build(**changes: object) -> RoomConsole:
        where = Where(socket=SOCKET, pane="%0", session_id=None, actor="operator")
        return make_app(
            live_settings(room_home, **changes),
            mux=mux,
            probe=AliveProbe(),
            where=where,
            clock=clock,
        )

    return build


def still_snapshot(
    room: Room, theme: str = "agent-room-dark"
) -> tuple[ConsoleSettings, RoomSnapshot]:
    """Settings and one snapshot for a picture: nothing live, nothing read later."""
    snapshot = SnapshotReader(room).read()
    settings = ConsoleSettings(
        home=SHOWN_HOME,
        theme=theme,
        live=False,
        watch=False,
        deliver=False,
        liveness=False,
        utc=True,
        theme_dirs=(),
    )
    return settings, snapshot


THEMES = sorted(p.stem for p in (Path(__file__).parents[2] / "themes").glob("*.toml"))
"""The shipped themes, for the pictures."""


def still_app(room: Room, clock: FrozenClock, theme: str = "agent-room-dark") -> RoomConsole:
    """The console of a picture: the seeded room's one snapshot, outside tmux, at ``clock``."""
    settings, snapshot = still_snapshot(room, theme)
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    return make_app(
        settings, mux=FakeMux(), probe=AliveProbe(), where=where, clock=clock, snapshot=snapshot
    )


async def settle_queue(pilot: Pilot[int]) -> None:
    """Wait until the queue shows the last handover (the one with the cycle badge)."""
    await pilot.pause()
    await until(pilot, lambda: pilot.app.screen.query("#queue"))
    queue = pilot.app.screen.query_one("#queue", HandoverQueue)
    await until(pilot, lambda: queue.option_count >= 2)
    # the first body is drawn after a frame; the second highlight draws at once
    queue.highlighted = queue.option_count - 1
    await pilot.pause()


async def select_session(pilot: Pilot[int], name: str) -> SessionsTable:
    """The sessions table once the seeded room's six sessions show, focused, on @name."""
    app = pilot.app
    assert isinstance(app, RoomConsole)
    table = app.main.query_one("#sessions", SessionsTable)
    await until(pilot, lambda: len(table.shown) == 6)
    table.focus()
    table.select_name(name)
    return table


async def run_from_palette(pilot: Pilot[int], text: str) -> None:
    """Open the command palette, type ``text``, wait for it to be the first hit, run it."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    await pilot.press(*text)

    def first_hit() -> bool:
        hits = pilot.app.screen.query(CommandList)
        if not hits or hits.first().option_count == 0:
            return False
        first = hits.first()
        prompt = str(first.get_option_at_index(0).prompt)
        return text.lower() in prompt.lower() and first.highlighted == 0

    await until(pilot, first_hit)
    await pilot.press("enter")


async def until(pilot: Pilot[int], check: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the app run until ``check()`` is truthy (workers post from their threads)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {check}")
        await pilot.pause(0.02)
        await asyncio.sleep(0)
