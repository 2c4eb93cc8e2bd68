"""What the click commands share: typed values, common options, a group's own command.

A command's click callback calls its handler with the handler's typed keyword
arguments (or its frozen options), so mypy checks every call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import click

from agent_room.cli import values


class Checked(click.ParamType):  # type: ignore[type-arg]
    """A value checked by one of ``cli.values``: its message is the error's."""

    def __init__(self, check: Callable[[str], Any], name: str) -> None:
        self.check = check
        self.name = name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The checked value (a default passes as it is)."""
        if not isinstance(value, str):
            return value
        try:
            return self.check(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Group(click.Group):
    """A group whose unknown command lists the commands it has."""

    def __init__(self, *args: Any, lazy: dict[str, str] | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("no_args_is_help", False)  # a missing command is a usage error
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}
        """Subcommands defined elsewhere, by name: ``"module:attribute"``, imported only
        when one runs (``handovers show`` lives beside its handler in ``cli.worktrees``,
        which costs ``handovers`` itself 20 ms to import)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The subcommands, those defined elsewhere included."""
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A subcommand, imported if it is defined elsewhere."""
        where = self.lazy.get(cmd_name)
        if where is None:
            return super().get_command(ctx, cmd_name)
        module, attribute = where.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Refuse an unknown command with the choices."""
        name = args[0]
        if not name.startswith("-") and self.get_command(ctx, name) is None:
            choices = ", ".join(repr(n) for n in self.list_commands(ctx))
            ctx.fail(f"invalid choice: {name!r} (choose from {choices})")
        return super().resolve_command(ctx, args)


MESSAGE_ID = Checked(values.message_id, "id")
COUNT = Checked(values.count, "count")
TIMEOUT = Checked(values.timeout, "timeout")
DOLLARS = Checked(values.dollars, "dollars")
PORT = Checked(values.port, "port")
SECONDS = Checked(values.seconds, "seconds")

json_option = click.option("--json", "as_json", is_flag=True, help="print JSON")
as_option = click.option(
    "--as",
    "as_name",
    metavar="NAME",
    help="speak as NAME when neither AGENT_ROOM_NAME nor a registered pane tells who",
)

no_watch_option = click.option(
    "--no-watch",
    is_flag=True,
    help="do not start a background deliverer when none runs (also: AGENT_ROOM_WATCH=off)",
)


def sentence(text: str) -> str:
    """A one-line summary as the first sentence of a command's help."""
    return text[0].upper() + text[1:] + "."


def own(ctx: click.Context, run: Callable[[], int]) -> int:
    """A group's own command (``loops``, ``usage`` ...): ``run`` when no subcommand
    follows; with one, the subcommand's status is the group's."""
    if ctx.invoked_subcommand is not None:
        return 0
    return run()
