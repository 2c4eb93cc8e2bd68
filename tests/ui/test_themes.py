"""Theme files: the shipped ones, the user's own (a bad one is reported, not fatal), the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_room.ui.app import RoomConsole
from agent_room.ui.themes import VARIABLE_DEFAULTS, load_themes, read_theme, shipped_dir
from tests.conftest import REPO
from tests.ui.conftest import run_from_palette, until

SHIPPED = sorted((REPO / "themes").glob("*.toml"))


def test_the_shipped_themes_are_dark_light_and_high_contrast() -> None:
    themes, errors = load_themes((shipped_dir(),))
    assert errors == []
    names = {t.name for t in themes}
    assert {"agent-room-dark", "agent-room-light", "agent-room-high-contrast"} <= names
    assert {t.name: t.dark for t in themes}["agent-room-light"] is False
    for theme in themes:
        assert set(VARIABLE_DEFAULTS) <= set(theme.variables), theme.name


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_console_reads_a_shipped_theme_as_the_schema_does(path: Path) -> None:
    """The console reads its own theme files without the schema check (no pydantic before
    the first paint); each must give the same theme as the checked read."""
    assert read_theme(path, trusted=True) == read_theme(path)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('name = "x"\nprimary = "not-a-colour"', "not a colour"),
        ('name = "x"\nprimary = "#fff"\nsparkle = true', "sparkle: Extra inputs"),
        ('name = "Bad Name"\nprimary = "#fff"', "name: String should match"),
        ('name = "x"\nprimary = ', "Invalid value"),
        ("dark = true", "Field required"),
    ],
)
def test_a_bad_theme_file_gives_one_line(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=reason) as caught:
        read_theme(path)
    assert "\n" not in str(caught.value)


def test_json_themes_are_read_too(tmp_path: Path) -> None:
    (tmp_path / "sea.json").write_text('{"name": "sea", "primary": "#0af", "dark": true}')
    themes, errors = load_themes((tmp_path,))
    assert errors == []
    assert themes[0].name == "sea"
    assert themes[0].variables["state-busy"] == VARIABLE_DEFAULTS["state-busy"]


@pytest.mark.anyio
async def test_user_themes_load_and_a_bad_one_is_a_notification(
    console: Callable[..., RoomConsole], tmp_path: Path
) -> None:
    folder = tmp_path / "themes"
    folder.mkdir()
    (folder / "sea.toml").write_text('name = "sea"\nprimary = "#0af"\n')
    (folder / "broken.toml").write_text('name = "broken"\nprimary = "#zzz"\n')
    app = console(theme_dirs=(str(folder),), theme="sea")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.snapshot is not None)
        assert app.theme == "sea"
        assert "broken" not in app.available_themes
        messages = [n.message for n in app._notifications]
        assert any("broken.toml" in m and "not a colour" in m for m in messages), messages
        await run_from_palette(pilot, "theme: agent-room-light")
        await until(pilot, lambda: app.theme == "agent-room-light")


@pytest.mark.anyio
async def test_an_unknown_theme_setting_falls_back(console: Callable[..., RoomConsole]) -> None:
    app = console(theme="no-such-theme")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert app.theme == "agent-room-dark"
        assert any("no-such-theme" in n.message for n in app._notifications)


@pytest.mark.slow
def test_the_wheel_ships_the_themes_and_styles(tmp_path: Path, wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    for theme in SHIPPED:
        assert f"agent_room/_themes/{theme.name}" in names
    assert "agent_room/ui/app.tcss" in names
    assert "agent_room/ui/widgets/sessions.py" in names
    code = "from agent_room.ui.themes import shipped_dir; print(shipped_dir())"
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(found.stdout.strip()) == (tmp_path / "site" / "agent_room" / "_themes").resolve()
