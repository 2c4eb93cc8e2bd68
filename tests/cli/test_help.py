"""The command line explains itself: commands grouped by task, every command and option
described (STYLE.md habit 19), so ``--help`` is where a newcomer can start."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator

import click
import pytest

from agent_room.cli.app import root
from agent_room.cli.commands import COMMANDS, TASKS
from tests.conftest import Cli


def _walk_click(
    command: click.Command, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    yield command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from _walk_click(sub, click.Context(sub, parent=ctx, info_name=name))


def test_every_click_command_and_parameter_has_a_description() -> None:
    missing = []
    for command, ctx in _walk_click(root, click.Context(root, info_name="agent-room")):
        if (
            COMMANDS.get(ctx.info_name or "", None) is not None
            and not COMMANDS[str(ctx.info_name)].module
            and ctx.parent is not None
            and ctx.parent.parent is None
        ):
            continue  # still on argparse: the test above holds it
        if not command.help:
            missing.append(ctx.command_path)
        for param in command.params:
            if not getattr(param, "help", None) and param.name != "help":
                missing.append(f"{ctx.command_path} {param.name}")
    assert missing == []


def test_help_groups_the_commands_by_task(cli: Cli) -> None:
    shown = cli("--help")
    assert shown.code == 0
    titles = [line[:-1] for line in shown.out.splitlines() if line.endswith(":")]
    assert titles[: len(TASKS)] == [title for title, _ in TASKS]
    assert "Other commands:" not in shown.out  # every command has its task
    start = shown.out.index("Start and stop agents:")
    assert shown.out.index("  start ", start) < shown.out.index("Messages and handovers:")


def test_a_command_says_what_it_is_for(cli: Cli) -> None:
    doctor = cli("doctor", "--help")
    assert doctor.code == 0
    assert "Check tmux, each client" in doctor.out
    who = cli("who", "--help")
    assert "The sessions in the room." in who.out


def _on_a_terminal(cli: Cli, *args: str) -> str:
    """What a command shows on a terminal (stdout and stderr on one pty)."""
    main, child = os.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "agent_room", *args],
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
        env=cli.env({"AGENT_ROOM_NAME": "backend"}),
        timeout=60,
        check=False,
    )
    os.close(child)
    shown = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(main, 4096):
            shown += chunk
    os.close(main)
    assert proc.returncode == 0, shown
    return shown.decode()


@pytest.mark.parametrize("extra", [(), ("--handover",)])
def test_send_shows_the_id_once_on_a_terminal(cli: Cli, extra: tuple[str, ...]) -> None:
    assert cli("join", "backend").code == cli("join", "frontend").code == 0
    shown = _on_a_terminal(cli, "send", "@frontend", "GET /tasks is live", *extra)
    assert shown.count("1") == 1, shown
    assert "#1" in shown
    piped = cli("send", "@frontend", "again", *extra, name="backend")
    assert piped.out == "2\n"  # a script still gets the id alone


def test_the_top_help_loads_no_command_module() -> None:
    """``agent-room --help`` lists the commands from ``cli.commands`` alone (their modules
    pull in the room, the console, the launcher ...)."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from agent_room.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(sys.argv[1:])\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    modules = {m.module for m in COMMANDS.values() if m.module}
    assert "agent_room.cli.links" in modules  # the check itself can see one
    top = subprocess.run(
        [sys.executable, "-c", probe, "--help"], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(top.stdout))
    assert "click" in loaded
    assert not loaded & modules, loaded & modules
