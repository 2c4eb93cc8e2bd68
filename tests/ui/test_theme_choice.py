"""The palette offers the console's themes (the shipped three and the user's), not
Textual's two dozen, and the theme chosen is the one the next start opens with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent_room.ui.app import RoomConsole
from agent_room.ui.settings import ConsoleSettings

pytestmark = pytest.mark.anyio

SHIPPED = {"agent-room-dark", "agent-room-light", "agent-room-high-contrast"}


async def test_only_the_consoles_themes_are_offered(console: Callable[..., RoomConsole]) -> None:
    app = console()
    async with app.run_test(size=(120, 35)):
        assert set(app.available_themes) - {"textual-dark"} == SHIPPED
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Theme" not in titles
        assert "Quit" in titles  # the rest of Textual's commands stay


def _load(tmp_path: Path, **extra: str) -> ConsoleSettings:
    environ = {
        "HOME": str(tmp_path / "home"),
        "AGENT_ROOM_HOME": str(tmp_path / "room"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **extra,
    }
    return ConsoleSettings.load(environ)


async def test_the_theme_chosen_is_remembered_for_the_next_start(
    console: Callable[..., RoomConsole], tmp_path: Path
) -> None:
    first = _load(tmp_path)
    assert first.theme == "agent-room-dark"
    assert first.theme_memory == str(tmp_path / "state" / "agent-room" / "theme")
    app = console(theme_memory=first.theme_memory)
    async with app.run_test(size=(120, 35)) as pilot:
        app.action_use_theme("agent-room-light")
        await pilot.pause()
    assert _load(tmp_path).theme == "agent-room-light"
    # what the user sets wins over what was remembered
    assert _load(tmp_path, AGENT_ROOM_THEME="agent-room-high-contrast").theme == (
        "agent-room-high-contrast"
    )
    config = tmp_path / "config" / "agent-room"
    config.mkdir(parents=True)
    (config / "console.toml").write_text('theme = "agent-room-dark"\n')
    assert _load(tmp_path).theme == "agent-room-dark"
    (config / "console.toml").write_text("debounce = 50\n")
    assert _load(tmp_path).theme == "agent-room-light"
