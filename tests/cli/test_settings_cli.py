"""The commands read the room's settings (``AGENT_ROOM_*`` and ``room.conf``) once, before
they do anything: a bad value ends them with one line and a non-zero exit, nothing
started or written; a good one, from the file or a variable, steers what they do."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.cli.background import background_pid
from tests.cli.conftest import one_line_error
from tests.conftest import Cli, require_tool


def _conf(home: Path, *lines: str) -> None:
    """Add ``lines`` to the room's ``room.conf`` (the PostgreSQL pass's names its database)."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    conf = home / "room.conf"
    conf.touch(mode=0o600)
    with conf.open("a") as file:
        file.write("".join(f"{line}\n" for line in lines))


def _untouched(home: Path) -> bool:
    """Nothing but ``room.conf`` in the room (no database, pid file or log made)."""
    return not home.exists() or {p.name for p in home.iterdir()} <= {"room.conf"}


@pytest.fixture
def watched(cli: Cli) -> Iterator[Cli]:
    yield cli
    cli("watch", "--stop")


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("AGENT_ROOM_WATCH_IDLE_EXIT", "soon", "AGENT_ROOM_WATCH_IDLE_EXIT=soon: input should"),
        ("AGENT_ROOM_MCP", "maybe", "AGENT_ROOM_MCP=maybe: give on or off"),
    ],
)
def test_a_bad_variable_stops_the_watch_before_it_starts(
    cli: Cli, variable: str, value: str, said: str
) -> None:
    result = cli("watch", "--background", env={variable: value})
    one_line_error(result, 2, said)
    assert _untouched(cli.home)


def test_a_bad_line_of_room_conf_stops_start_before_anything_runs(cli: Cli, tmp_path: Path) -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")
    _conf(cli.home, "mcp = perhaps")
    socket = tmp_path / "tmux.sock"
    argv = ("start", "w1", "--agent", "command", "--detach", "--", "sleep", "600")
    result = cli(*argv, env={"AGENT_ROOM_TMUX": str(socket)})
    one_line_error(result, 2, "room.conf line", "mcp=perhaps: give on or off")
    assert not socket.exists()  # no tmux server, no agent
    assert _untouched(cli.home)


def test_doctor_names_a_bad_setting(cli: Cli) -> None:
    result = cli("doctor", env={"AGENT_ROOM_WATCH": "sometimes"})
    assert result.code == 1
    assert "FIX  settings: AGENT_ROOM_WATCH=sometimes: give on or off" in result.out


def test_room_conf_declines_the_background_deliverer_and_a_variable_overrides_it(
    watched: Cli,
) -> None:
    """``watch = off`` in the file: join starts none; ``AGENT_ROOM_WATCH=on``: it does."""
    _conf(watched.home, "watch = off")
    unset = {"AGENT_ROOM_WATCH": ""}  # the suite's own "off", taken away
    joined = watched("join", "api", "--pane", "%3", env=unset)
    assert joined.code == 0, joined
    assert "background" not in joined.err
    assert background_pid(str(watched.home)) is None
    again = watched("join", "web", "--pane", "%4", env={"AGENT_ROOM_WATCH": "on"})
    assert again.code == 0, again
    assert "a deliverer runs in the background" in again.err
    assert background_pid(str(watched.home)) is not None


def test_a_bad_watch_setting_leaves_join_undone(cli: Cli) -> None:
    result = cli("join", "api", "--pane", "%3", env={"AGENT_ROOM_WATCH": "sometimes"})
    one_line_error(result, 2, "AGENT_ROOM_WATCH=sometimes: give on or off")
    assert _untouched(cli.home)
