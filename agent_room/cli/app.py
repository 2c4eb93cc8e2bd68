"""The ``agent-room`` command line on click: the root group and how it runs a command.

The root lists the commands by task from ``cli.commands`` and loads a command's module
only when that command runs (or shows its help). Usage errors are one line on stderr
with exit status 2 and the command's own ``--help`` to read next.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from agent_room import __version__
from agent_room.cli.commands import COMMANDS, TASKS
from agent_room.cli.params import Group, sentence
from agent_room.turn.core.printable import printable


class Root(Group):
    """``agent-room``: the commands of ``cli.commands``, each loaded when it runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: ARG002 - click's signature
        """Every command, in the order of the tasks."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:  # noqa: ARG002
        """The command ``cmd_name`` from its module, None if there is none."""
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry.module)
        command: click.Command = getattr(module, f"{cmd_name.replace('-', '_')}_command")
        if command.help is None:
            command.help = sentence(entry.summary)
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Usage, what it is, the commands by task, the options, where the room lives."""
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_commands(ctx, formatter)
        click.Command.format_options(self, ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_commands(
        self,
        ctx: click.Context,  # noqa: ARG002 - click's signature
        formatter: click.HelpFormatter,
    ) -> None:
        """One section per task, from the table alone (no command module is loaded)."""
        for title, group in TASKS:
            with formatter.section(title):
                formatter.write_dl([(name, c.summary) for name, c in group.items()])


@click.group(
    cls=Root,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="The room lives in $AGENT_ROOM_HOME (default ~/.agent-room)."
    " agent-room COMMAND --help says more about each command.",
)
@click.version_option(
    __version__, "--version", prog_name="agent-room", message="%(prog)s %(version)s"
)
@click.pass_context
def root(ctx: click.Context) -> int:
    """A control room for many AI coding agents in tmux."""
    if ctx.invoked_subcommand is None:  # `agent-room` piped, or with options alone
        click.echo(ctx.get_help())
    return 0


def run(words: Sequence[str]) -> int:
    """Run the command ``words`` name; its exit status. Not through ``root.main``, whose
    handling of a closed pipe and of ^C (exit 1, a blank line) is not the room's: those
    go up to ``cli.main`` as they do from every command."""
    try:
        with root.make_context("agent-room", list(words)) as ctx:
            code = root.invoke(ctx)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "agent-room"
        message = printable(exc.format_message())  # it quotes what was typed
        print(f"agent-room: {message} (see: {where} --help)", file=sys.stderr)
        return 2
    except click.ClickException as exc:
        print(f"agent-room: {printable(exc.format_message())}", file=sys.stderr)
        return exc.exit_code
    except click.exceptions.Exit as exc:  # --help, --version
        return exc.exit_code
    return code if isinstance(code, int) else 0
