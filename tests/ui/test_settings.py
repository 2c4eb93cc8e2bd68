"""``ConsoleSettings.load``: the config file and the environment, and bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.turn.core.errors import BadInput
from agent_room.ui.settings import ConsoleSettings


def _environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "AGENT_ROOM_HOME": str(tmp_path / "room"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **extra,
    }


def test_defaults_and_theme_folders(tmp_path: Path) -> None:
    settings = ConsoleSettings.load(_environ(tmp_path))
    assert settings.home == str(tmp_path / "room")
    assert settings.theme == "agent-room-dark"
    assert (settings.watch, settings.deliver, settings.live) == (True, True, True)
    assert settings.theme_dirs == (
        str(tmp_path / "config" / "agent-room" / "themes"),
        str(tmp_path / "room" / "themes"),
    )


def test_config_file_then_environment(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "agent-room"
    folder.mkdir(parents=True)
    (folder / "console.toml").write_text('theme = "agent-room-light"\ndeliver = false\n')
    settings = ConsoleSettings.load(_environ(tmp_path))
    assert (settings.theme, settings.deliver) == ("agent-room-light", False)
    overridden = ConsoleSettings.load(_environ(tmp_path, AGENT_ROOM_THEME="sea"))
    assert overridden.theme == "sea"


@pytest.mark.parametrize(
    ("text", "reason"),
    [("debounce = 0", "debounce"), ("colour = 'blue'", "colour"), ("theme = ", "console.toml")],
)
def test_a_bad_config_is_one_line_of_bad_input(tmp_path: Path, text: str, reason: str) -> None:
    folder = tmp_path / "config" / "agent-room"
    folder.mkdir(parents=True)
    (folder / "console.toml").write_text(text)
    with pytest.raises(BadInput, match=reason) as caught:
        ConsoleSettings.load(_environ(tmp_path))
    assert "\n" not in str(caught.value)
