"""The command handlers take typed parameters, and the click commands hand them over.

A handler is called with keyword arguments (or, for ``start``, a frozen ``StartOptions``)
that mypy checks at every call; no ``argparse.Namespace`` is built for one. What mypy
cannot see is held here: that
click passes each callback exactly the parameters it declares, and that the two calls
made from a dictionary (``send`` from ``parse_send``, a resume's ``start`` from the
parser's defaults) get the names they expect.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from agent_room import cli
from agent_room.cli.app import root
from agent_room.cli.launcher import StartOptions
from agent_room.cli.messages import cmd_history
from agent_room.cli.send import send_message
from agent_room.cli.start import start_command
from agent_room.cli.usage import cmd_budget_set
from agent_room.room.service import Room
from agent_room.turn.core.errors import BadInput
from agent_room.turn.send import parse_send

FILLED_BY_THE_COMMAND = {"agent-room start": {"agent_args"}}
"""Parameters a command puts in ``ctx.params`` itself (the words after ``--``)."""


def _handlers() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every ``cmd_*`` function of the command line's modules."""
    for info in pkgutil.iter_modules(cli.__path__, "agent_room.cli."):
        module_name = info.name
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if name.startswith("cmd_") and getattr(value, "__module__", "") == module_name:
                yield f"{module_name}.{name}", value


def _walk(command: click.Command, ctx: click.Context) -> Iterator[click.Context]:
    yield ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from _walk(sub, click.Context(sub, parent=ctx, info_name=name))


def test_every_handler_takes_typed_keywords_or_frozen_options() -> None:
    found = dict(_handlers())
    assert len(found) > 40  # the modules were read
    wrong = []
    for where, handler in found.items():
        for param in inspect.signature(handler).parameters.values():
            annotation = str(param.annotation)
            options = param.kind is param.POSITIONAL_OR_KEYWORD and annotation.endswith("Options")
            if "Namespace" in annotation or param.annotation is param.empty:
                wrong.append(f"{where}({param.name}: {annotation})")
            elif param.kind is not param.KEYWORD_ONLY and not options:
                wrong.append(f"{where}({param.name}): neither keyword-only nor options")
    assert wrong == []


def test_start_options_are_frozen() -> None:
    assert is_dataclass(StartOptions)
    options = StartOptions(**start_command.make_context("start", ["backend"]).params)
    with pytest.raises(AttributeError):
        options.detach = True  # type: ignore[misc]


def test_every_click_callback_takes_exactly_the_parameters_of_its_command() -> None:
    """click calls a callback with the values of the parameters it declares, by name: a
    renamed option (``--json`` reaches handlers as ``as_json``) that the callback does not
    follow would fail only when the command runs."""
    wrong = []
    for ctx in _walk(root, click.Context(root, info_name="agent-room")):
        command = ctx.command
        if command.callback is None:
            continue
        signature = inspect.signature(command.callback)
        if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
            continue  # send: the fields of its one parser (held below)
        takes = {name for name in signature.parameters if name != "ctx"}
        declared = {p.name for p in command.params if p.expose_value and p.name}
        declared |= FILLED_BY_THE_COMMAND.get(ctx.command_path, set())
        if takes != declared:
            wrong.append(f"{ctx.command_path}: takes {sorted(takes)}, gets {sorted(declared)}")
    assert wrong == []


def test_send_message_takes_the_fields_of_sends_one_parser() -> None:
    """``send`` reaches ``send_message`` with ``parse_send``'s fields, on the quick path's
    full shapes (``cmd_send``) and through click alike."""
    read = parse_send(["@frontend", "--handover", "--todo", "build it", "the", "body"])
    assert read is not None
    assert set(read) == set(inspect.signature(send_message).parameters)


def test_a_resume_starts_with_the_defaults_of_start() -> None:
    """A resume builds its ``StartOptions`` from the ``start`` command's own parse, so an
    option added to ``start`` without a field here fails at once."""
    params = start_command.make_context("start", ["backend", "--cwd", "/srv", "--detach"]).params
    assert StartOptions(**params) == StartOptions(
        name="backend",
        cwd="/srv",
        worktree=None,
        agent="claude",
        agent_kind=None,
        detach=True,
        no_watch=False,
        agent_args=[],
    )
    assert {f.name for f in fields(StartOptions)} == set(params)


def test_a_handler_is_called_with_its_typed_parameters(
    room: Room, room_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A handler runs from its keyword arguments alone, as the click command calls it."""
    assert room_home.is_dir()
    room.join("backend")
    room.join("frontend")
    room.send("backend", "frontend", "GET /tasks is live")
    assert cmd_history(count=5, as_json=True) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["sender"], r["recipient"], r["body"]) for r in rows] == [
        ("backend", "frontend", "GET /tasks is live")
    ]
    with pytest.raises(BadInput, match="one of them"):
        cmd_budget_set(name="backend", amount=5.0, room=True, per=None)
