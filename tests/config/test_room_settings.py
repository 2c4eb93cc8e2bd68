"""``RoomSettings``: the variables and ``room.conf`` both feed one model; a variable beats
the file, the file beats the default; a bad value is one line that says where it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.config.settings import RoomSettings
from agent_room.turn.core.errors import BadInput, UnsafeRoom
from agent_room.turn.store.roomconf import KEYS


def _room(tmp_path: Path, conf: str | None = None) -> dict[str, str]:
    """A private room, with ``conf`` as its ``room.conf``; its environment."""
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    if conf is not None:
        (home / "room.conf").touch(mode=0o600)
        (home / "room.conf").write_text(conf)
    return {"AGENT_ROOM_HOME": str(home)}


def test_nothing_set_gives_the_defaults(tmp_path: Path) -> None:
    settings = RoomSettings.load(_room(tmp_path))
    assert settings.home == str(tmp_path / "room")
    assert (settings.mcp, settings.watch, settings.watch_idle_exit) == (True, True, 600.0)
    assert (settings.database, settings.tmux, settings.program("claude")) == (None, None, None)


def test_the_file_and_the_variables_both_feed_the_model(tmp_path: Path) -> None:
    env = _room(tmp_path, "# the team's room\ntmux = /run/team.sock\nmcp = off\n")
    env |= {"AGENT_ROOM_CODEX": "/opt/codex", "AGENT_ROOM_WATCH_IDLE_EXIT": "30"}
    settings = RoomSettings.load(env)
    assert (settings.tmux, settings.mcp) == ("/run/team.sock", False)  # the file's
    assert (settings.program("codex"), settings.watch_idle_exit) == ("/opt/codex", 30.0)


@pytest.mark.parametrize(
    ("conf", "variable", "expected"),
    [
        (None, None, 600.0),  # the default
        ("watch_idle_exit = 60\n", None, 60.0),  # the file beats the default
        ("watch_idle_exit = 60\n", "5", 5.0),  # the variable beats the file
        (None, "5", 5.0),
        ("watch_idle_exit = 60\n", "", 60.0),  # an empty variable is no variable
    ],
)
def test_a_variable_beats_the_file_beats_the_default(
    tmp_path: Path, conf: str | None, variable: str | None, expected: float
) -> None:
    env = _room(tmp_path, conf)
    if variable is not None:
        env["AGENT_ROOM_WATCH_IDLE_EXIT"] = variable
    assert RoomSettings.load(env).watch_idle_exit == expected


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("AGENT_ROOM_WATCH_IDLE_EXIT", "soon", "AGENT_ROOM_WATCH_IDLE_EXIT=soon: input should be"),
        ("AGENT_ROOM_WATCH_IDLE_EXIT", "-1", "AGENT_ROOM_WATCH_IDLE_EXIT=-1: input should be"),
        ("AGENT_ROOM_MCP", "maybe", "AGENT_ROOM_MCP=maybe: give on or off"),
        ("AGENT_ROOM_WATCH", "sometimes", "AGENT_ROOM_WATCH=sometimes: give on or off"),
        ("AGENT_ROOM_DATABASE", "mysql://db/x", "AGENT_ROOM_DATABASE: must be a postgresql://"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(
    tmp_path: Path, variable: str, value: str, said: str
) -> None:
    with pytest.raises(BadInput) as caught:
        RoomSettings.load({**_room(tmp_path, "watch_idle_exit = 60\n"), variable: value})
    assert str(caught.value).startswith(said)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("watch_idle_exit = soon", "room.conf line 2: watch_idle_exit=soon: input should be"),
        ("watch = sometimes", "room.conf line 2: watch=sometimes: give on or off"),
        ("database = mysql://u:s3cret@db/x", "room.conf line 2: database: must be a postgresql"),
    ],
)
def test_a_bad_line_of_the_file_is_one_line_naming_it(tmp_path: Path, line: str, said: str) -> None:
    with pytest.raises(BadInput) as caught:
        RoomSettings.load(_room(tmp_path, f"# the team's room\n{line}\n"))
    assert said in str(caught.value)
    assert "\n" not in str(caught.value)
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize("line", ["home = /elsewhere", "host = laptop", "theme = sea"])
def test_a_setting_the_file_cannot_hold_is_refused_with_its_line(tmp_path: Path, line: str) -> None:
    """``home`` names where the file is, ``host`` is asked on every hook: variables only
    (the console's theme is the console's, ``console.toml``)."""
    with pytest.raises(UnsafeRoom, match=r"room.conf line 1: unknown setting"):
        RoomSettings.load(_room(tmp_path, f"{line}\n"))


def test_every_setting_the_file_may_hold_is_a_field_of_the_model() -> None:
    """The hot path's reader and the model agree on the file's settings."""
    fields = set(RoomSettings.model_fields)
    assert set(KEYS) == fields - {"home", "host"}


def test_the_variables_of_the_environment_given_are_read_not_the_processs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_ROOM_TMUX", "/the/process/socket")
    assert RoomSettings.load(_room(tmp_path)).tmux is None


def test_a_relative_home_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsafeRoom, match="AGENT_ROOM_HOME=room is a relative path"):
        RoomSettings.load({"AGENT_ROOM_HOME": "room"})
