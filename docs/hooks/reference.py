"""mkdocs hook: the CLI and settings reference pages, written from the code at build time.

A page holding ``<!-- cli-reference -->`` gets every command of ``agent-room`` as the
argparse parser defines it (grouped by task as ``--help`` shows them); one holding
``<!-- settings-reference -->`` gets the room's settings (``config.settings.RoomSettings``)
and the console's (the dataclasses of ``agent_room/ui/settings.py`` and
``agent_room/config/notify.py``), with the docstring under each field. Kept small on purpose:
the command line will move to click, and only ``cli_reference`` will change with it.
"""

from __future__ import annotations

import argparse
import ast
import inspect
from typing import Any

from agent_room.cli.parser import TASKS, build_parser
from agent_room.config.notify import NotifySettings
from agent_room.config.settings import RoomSettings
from agent_room.store.roomconf import KEYS
from agent_room.ui import settings

CLI_MARK = "<!-- cli-reference -->"
SETTINGS_MARK = "<!-- settings-reference -->"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | what it does |", "|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        names = ", ".join(action.option_strings) or str(action.metavar or action.dest)
        text = str(action.help or "").replace("%%", "%").replace("|", "\\|")
        rows.append(f"| `{names}` | {text} |")
    return rows if len(rows) > 2 else []


def _command(path: list[str], parser: argparse.ArgumentParser, level: int) -> list[str]:
    usage = parser.format_usage().removeprefix("usage: ").strip()
    lines = [f"{'#' * level} {' '.join(path)}", "", str(parser.description or ""), ""]
    lines += ["```text", " ".join(usage.split()), "```", "", *_options(parser), ""]
    for name, child in _subcommands(parser).items():
        lines += _command([*path, name], child, level + 1)
    return lines


def cli_reference() -> str:
    """Every command, grouped by task, with its usage and options."""
    parser = build_parser()
    commands = _subcommands(parser)
    lines: list[str] = []
    grouped = [name for _, names in TASKS for name in names]
    groups = [*TASKS, ("Other commands", tuple(n for n in commands if n not in grouped))]
    for title, names in groups:
        present = [n for n in names if n in commands]
        if not present:
            continue
        lines += [f"## {title}", ""]
        for name in present:
            lines += _command(["agent-room", name], commands[name], 3)
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
