"""Renaming a session from the console: the key and the palette open a dialog; the room
renames the session and what waits for it follows; a taken or bad name is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from agent_room.room.service import Room
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.ui.app import RoomConsole
from agent_room.ui.screens.modals import RenameScreen
from tests.ui.conftest import run_from_palette, select_session, until

SIZE = (160, 48)
pytestmark = pytest.mark.anyio


def _names(home: Path) -> set[str]:
    room = Room(SqliteStore(home))
    try:
        return set(room.store.member_names())
    finally:
        room.close()


async def test_n_renames_the_selected_session(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        table = await select_session(pilot, "frontend")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, RenameScreen))
        field = app.screen.query_one("#new-name", Input)
        assert field.value == "frontend"
        field.value = ""
        await pilot.press(*"web", "enter")
        await until(pilot, lambda: "web" in _names(room_home))
        assert "frontend" not in _names(room_home)
        await until(
            pilot, lambda: any("@frontend is now @web" in n.message for n in app._notifications)
        )
        await until(pilot, lambda: "web" in [r.name for r in table.shown])


async def test_the_palette_renames_and_a_taken_name_is_refused(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "api")
        await run_from_palette(pilot, "Rename the selected")
        await until(pilot, lambda: isinstance(app.screen, RenameScreen))
        field = app.screen.query_one("#new-name", Input)
        field.value = "Bad Name"
        await pilot.press("enter")
        error = app.screen.query_one("#dialog-error", Static)
        assert "a-z, 0-9" in str(error.render())
        field.value = "backend"  # taken
        await pilot.press("enter")
        await until(
            pilot, lambda: any("@backend is taken" in n.message for n in app._notifications)
        )
        assert {"api", "backend"} <= _names(room_home)
