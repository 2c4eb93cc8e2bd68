"""mkdocs hook: the CLI and settings reference pages, written from the code at build time.

A page holding ``<!-- cli-reference -->`` gets every command of ``agent-room`` as the
click command line defines it (grouped by task as ``--help`` shows them); one holding
``<!-- settings-reference -->`` gets the room's settings (``config.settings.RoomSettings``)
and the console's (the dataclasses of ``agent_room/ui/settings.py`` and
``agent_room/config/notify.py``), with the docstring under each field. mkdocs-click renders
one command tree, not the task groups of ``--help``: hence this small walk.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

import click

from agent_room.cli.app import root
from agent_room.cli.commands import TASKS
from agent_room.config.notify import NotifySettings
from agent_room.config.settings import RoomSettings
from agent_room.turn.store.roomconf import KEYS
from agent_room.ui import settings

CLI_MARK = "<!-- cli-reference -->"
SETTINGS_MARK = "<!-- settings-reference -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _click_command(ctx: click.Context, level: int) -> list[str]:
    command = ctx.command
    usage = ctx.get_usage().removeprefix("Usage: ").strip()
    lines = [f"{'#' * level} {ctx.command_path}", "", str(command.help or ""), ""]
    lines += ["```text", " ".join(usage.split()), "```", ""]
    rows = []
    for param in command.get_params(ctx):
        if param is command.get_help_option(ctx):
            continue
        names = (
            ", ".join(param.opts) if isinstance(param, click.Option) else param.human_readable_name
        )
        rows.append(f"| `{names}` | {_cell(str(getattr(param, 'help', None) or ''))} |")
    if rows:
        lines += ["| argument | what it does |", "|---|---|", *rows, ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                lines += _click_command(click.Context(sub, parent=ctx, info_name=name), level + 1)
    return lines


def cli_reference() -> str:
    """Every command, grouped by task, with its usage and options."""
    lines: list[str] = []
    top = click.Context(root, info_name="agent-room")
    for title, group in TASKS:
        lines += [f"## {title}", ""]
        for name in group:
            command = root.get_command(top, name)
            assert command is not None, name
            lines += _click_command(click.Context(command, parent=top, info_name=name), 3)
    return "\n".join(lines)


def _fields(cls: type) -> list[tuple[str, str, str]]:
    """(name, default, docstring) of each field, read from the class's source."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    found = []
    for node, after in zip(body, [*body[1:], None], strict=True):
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        if node.target.id.startswith("_"):
            continue
        doc = ""
        if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            doc = " ".join(str(after.value.value).split())
        default = ast.unparse(node.value) if node.value is not None else "(required)"
        found.append((node.target.id, default, doc))
    return found


def room_reference() -> list[str]:
    """The room's settings: each one's variable, whether ``room.conf`` may hold it."""
    lines = ["## The room's settings", "", " ".join((RoomSettings.__doc__ or "").split()), ""]
    lines += ["| variable | in `room.conf` | default | what it does |", "|---|---|---|---|"]
    for name, default, doc in _fields(RoomSettings):
        in_file = f"`{name}`" if name in KEYS else "no"
        cell = doc.replace("|", "\\|")
        shown = "~/.agent-room" if name == "home" else default  # load() always gives it
        lines.append(f"| `AGENT_ROOM_{name.upper()}` | {in_file} | `{shown}` | {cell} |")
    return [*lines, ""]


def settings_reference() -> str:
    """The room's settings, then the console's (``console.toml``) and its ``[notify]``."""
    lines: list[str] = room_reference()
    tables = (("console.toml", settings.ConsoleSettings), ("[notify]", NotifySettings))
    for title, cls in tables:
        lines += [f"## `{title}`", "", " ".join((cls.__doc__ or "").split()), ""]
        lines += ["| setting | default | what it does |", "|---|---|---|"]
        for name, default, doc in _fields(cls):
            cell = doc.replace("|", "\\|")
            lines.append(f"| `{name}` | `{default}` | {cell} |")
        lines.append("")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_kwargs: Any) -> str:
    """Put the generated reference where a page asks for it."""
    if CLI_MARK in markdown:
        markdown = markdown.replace(CLI_MARK, cli_reference())
    if SETTINGS_MARK in markdown:
        markdown = markdown.replace(SETTINGS_MARK, settings_reference())
    return markdown
