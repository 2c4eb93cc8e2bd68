"""The first hour of a newcomer: usage errors that point at the right help, a console
that refuses to run without a terminal, a room only made by commands that write."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli.conftest import one_line_error
from tests.conftest import Cli


def test_the_console_without_a_terminal_exits_at_once_with_status_2(cli: Cli) -> None:
    started = time.monotonic()
    result = cli("console")
    assert time.monotonic() - started < 20
    one_line_error(result, 2, "the console needs a terminal")
    assert result.out == ""


def test_an_unknown_command_lists_the_commands(cli: Cli) -> None:
    one_line_error(cli("frobnicate"), 2, "invalid choice: 'frobnicate'", "'who'", "'send'")


@pytest.mark.parametrize(
    ("argv", "help_of"),
    [
        (("who", "--bogus"), "agent-room who --help"),
        (("handovers", "--bogus"), "agent-room handovers --help"),
        (("link", "freeze", "1", "--bogus"), "agent-room link freeze --help"),
    ],
)
def test_an_unknown_option_points_at_the_commands_own_help(
    cli: Cli, argv: tuple[str, ...], help_of: str
) -> None:
    one_line_error(cli(*argv), 2, f"No such option '--bogus'. (see: {help_of})")


@pytest.mark.parametrize("group", ["plugin", "tmux", "timer", "link", "memory", "room"])
def test_a_command_group_without_its_subcommand_is_a_usage_error(cli: Cli, group: str) -> None:
    one_line_error(cli(group), 2, "Missing command.", f"{group} --help")


@pytest.mark.parametrize("seconds", ["-3", "nan", "1e9"])
def test_demo_refuses_a_bad_number_of_seconds(cli: Cli, seconds: str) -> None:
    one_line_error(cli("demo", "--seconds", seconds), 2, "invalid time")


def test_stop_with_no_demo_says_so(cli: Cli, tmp_path: Path) -> None:
    result = cli("demo", "--stop", env={"TMPDIR": str(tmp_path)})
    assert result.code == 0, result
    assert "no demo room of yours is running" in result.err


def test_stop_names_only_a_demo_room(cli: Cli, tmp_path: Path) -> None:
    one_line_error(cli("demo", "--stop", str(tmp_path)), 1, "is not a demo room of yours")
    assert tmp_path.is_dir()


def test_demo_claude_finds_the_client_pinned_in_the_checkout() -> None:
    from agent_room.demo.room import PINNED_CLAUDE, claude_binary
    from tests.conftest import REPO, require_tool

    pinned = REPO / PINNED_CLAUDE
    require_tool(pinned.is_file(), "the pinned Claude Code (.ci/setup)")
    assert claude_binary({"PATH": "/nonexistent"}) == str(pinned.absolute())


@pytest.mark.sqlite
def test_stop_stops_the_demo_this_terminal_points_at_and_no_other(cli: Cli, tmp_path: Path) -> None:
    from agent_room.demo.folder import PREFIX
    from agent_room.demo.room import MARK

    rooms = []
    for n in range(2):
        root = tmp_path / f"{PREFIX}{n}"
        (root / "room").mkdir(parents=True)
        root.chmod(0o700)
        (root / MARK).write_text("{}")
        rooms.append(root)
    env = {"TMPDIR": str(tmp_path)}
    refused = cli("demo", "--stop", env=env)
    one_line_error(refused, 1, "this terminal uses no demo room", str(rooms[0]), str(rooms[1]))
    stopped = cli("demo", "--stop", env={**env, "AGENT_ROOM_HOME": str(rooms[1] / "room")})
    assert stopped.err.splitlines() == [
        f"stopped the demo room in {rooms[1]}",
        "this shell still points agent-room at it: unset AGENT_ROOM_HOME AGENT_ROOM_TMUX"
        " (then agent-room uses your own room)",
    ]
    assert [p.name for p in tmp_path.iterdir()] == [rooms[0].name]
    inside = cli("demo", "--stop", env={**env, "TMUX": f"{rooms[0]}/t,123,0"})
    assert inside.err == f"stopped the demo room in {rooms[0]}\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["room", "./room", "a/b"])
def test_a_relative_room_home_is_refused_by_commands_and_hooks(
    cli: Cli, tmp_path: Path, value: str
) -> None:
    result = cli("who", env={"AGENT_ROOM_HOME": value})
    one_line_error(result, 1, f"AGENT_ROOM_HOME={value} is a relative path")
    hook = cli("hook", "SessionStart", env={"AGENT_ROOM_HOME": value, "HOME": str(tmp_path)})
    assert (hook.code, hook.out) == (0, "")
    log = (tmp_path / ".agent-room" / "errors.log").read_text()
    assert "is a relative path" in log
    assert not (Path.cwd() / value).exists()


@pytest.mark.sqlite
@pytest.mark.parametrize(
    "argv",
    [
        ("who",),
        ("who", "--json"),
        ("tree",),
        ("history", "--json"),
        ("handovers",),
        ("links",),
        ("timers",),
        ("ledger",),
        ("checkpoints",),
        ("loops",),
        ("intercom",),
        ("entities",),
        ("transport",),
        ("inbox", "--peek", "--as", "operator"),
        ("link", "settings"),
        ("loops", "settings"),
        ("memory", "settings"),
        ("intercom", "settings"),
        ("status",),
    ],
)
def test_reading_commands_make_no_room(cli: Cli, argv: tuple[str, ...]) -> None:
    result = cli(*argv)
    assert result.code == 0, result
    assert "Traceback" not in result.err
    assert not cli.home.exists()


@pytest.mark.sqlite
def test_a_writing_command_still_makes_the_room(cli: Cli) -> None:
    assert cli("join", "backend").code == 0
    assert (cli.home / "room.db").is_file()


def test_handovers_json_has_its_fields_as_an_object_and_iso_times(cli: Cli) -> None:
    assert cli("join", "api").code == 0
    assert cli("join", "web").code == 0
    fields = ("--changed", "GET /t", "--todo", "build it", "--contract", "T={}")
    sent = cli("send", "@web", "--handover", *fields, name="api")
    assert sent.code == 0, sent
    (row,) = json.loads(cli("handovers", "--json").out)
    assert row["fields"]["what_to_do"] == "build it"
    assert row["fields"]["contract"] == "T={}"
    (message,) = json.loads(cli("history", "--json").out)
    assert row["requested_at"] == message["timestamp"]
    assert row["decided_at"] is None


def test_as_that_disagrees_with_agent_room_name_is_refused(cli: Cli) -> None:
    assert cli("join", "api").code == 0
    assert cli("join", "web").code == 0
    refused = cli("send", "@web", "hello", "--as", "web", name="api")
    one_line_error(refused, 2, "--as web disagrees with AGENT_ROOM_NAME=api")
    assert cli("send", "@web", "hello", "--as", "api", name="api").code == 0


def test_a_body_a_hook_hands_over_is_read_in_the_flow(cli: Cli) -> None:
    from agent_room.room.service import Room
    from agent_room.room.snapshot import SnapshotReader

    assert cli("join", "api").code == 0
    assert cli("join", "web").code == 0
    assert cli("send", "@web", "hello", name="api").code == 0
    room = Room.open({"AGENT_ROOM_HOME": str(cli.home)})
    try:
        (message,) = room.history(1)
        room.store.mark_delivered("web", [message["id"]], at=room.clock(), via="nudge")
        kinds = [event.kind for event in SnapshotReader(room).read().flow]
    finally:
        room.close()
    assert kinds[-2:] == ["delivered", "read"]
    (row,) = json.loads(cli("who", "--json").out)[1:]
    assert row["unread"] == 0
