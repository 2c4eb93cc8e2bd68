"""The argparse parser of the commands not yet on click (``cli.app`` runs the others):
the room's bus commands (join, leave, inbox, history, who, tree, approve, reject,
handovers and handovers show) and status. They run on every agent's turn or at an
operator's every glance, and loading click costs them some 10 ms more than this parser."""

from __future__ import annotations

import argparse

from agent_room.cli import values
from agent_room.cli.commands import summary as _summary
from agent_room.core.printable import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Handler = Callable[[argparse.Namespace], int]


def _lazy(module: str, function: str) -> Handler:
    """A handler imported only when its command runs: each process loads one command."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        handler: Handler = getattr(importlib.import_module(module), function)
        return handler(args)

    return run


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line with exit code 2, as every other bad input."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"agent-room: {message} (see: {self.prog} --help)\n")


def _describe(parser: argparse.ArgumentParser) -> None:
    """A subcommand without a description of its own gets its one-line help as one, so
    ``agent-room CMD --help`` says what CMD is for, not only how to type it."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for sub in subs:
        helps = {a.dest: a.help for a in sub._choices_actions}
        for name, child in sub.choices.items():
            if not child.description and helps.get(name):
                text = str(helps[name])
                child.description = text[0].upper() + text[1:] + "."
            _describe(child)


def _add_identity(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as",
        dest="as_name",
        metavar="NAME",
        help="speak as NAME when neither AGENT_ROOM_NAME nor a registered pane tells who",
    )


def _add_no_watch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="do not start a background deliverer when none runs (also: AGENT_ROOM_WATCH=off)",
    )


def _commands(parser: Any, what: str, metavar: str = "COMMAND", *, required: bool = True) -> Any:
    """The subcommands of ``parser`` (a real one or a skipped command's stand-in)."""
    return parser.add_subparsers(
        title=f"{what} commands", metavar=metavar, parser_class=_Parser, required=required
    )


def _checked(check: Callable[[str], Any]) -> Callable[[str], Any]:
    """``check`` (of ``cli.values``) as an argparse type: its message is the error."""

    def convert(text: str) -> Any:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = check.__name__
    return convert


_message_id = _checked(values.message_id)
_count = _checked(values.count)


class _Skip:
    """Stands in for the parser of a command this process will not run."""

    def add_argument(self, *_args: Any, **_kwargs: Any) -> None:
        """Ignored."""

    def set_defaults(self, **_kwargs: Any) -> None:
        """Ignored."""

    def add_subparsers(self, **_kwargs: Any) -> _Only:
        """Nothing below a skipped command is built either."""
        return _Only(None, "")


class _Only:
    """Builds only the subcommand a process runs: argparse looks up translations for every
    option it adds, and building all of them cost some 13 ms on each command."""

    def __init__(self, sub: argparse._SubParsersAction[_Parser] | None, wanted: str | None):
        self.sub = sub
        self.wanted = wanted

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        """The real subparser when ``name`` is wanted (or all are), else a stand-in."""
        if self.sub is not None and (self.wanted is None or name == self.wanted):
            return self.sub.add_parser(name, **kwargs)
        return _Skip()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command`` (the first argument), only that command is built."""
    parser = _Parser(prog="agent-room")
    real = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    known = command is not None and not command.startswith("-")
    sub = _Only(real, command if known else None)
    _bus_commands(sub)
    _room_commands(sub)
    _operator_commands(sub)
    if known and command not in real.choices:
        return build_parser()  # an unknown command: its error lists every command
    _describe(parser)
    return parser


def run(words: list[str]) -> int:
    """Parse ``words`` (a command not yet on click) and run its handler."""
    parser = build_parser(words[0] if words else None)
    args, extra = parser.parse_known_args(words)
    if extra:  # said by the command typed, so that its --help is the one pointed at
        command = subcommand_parser(parser, words)
        command.error(f"unrecognized arguments: {printable(' '.join(extra))}")
    code: int = args.handler(args)
    return code


def subcommand_parser(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    """The deepest subparser ``words`` name (``link freeze`` ...), so that an error about an
    option points at the help of the command that was typed, not at the top level."""
    current = parser
    for word in words:
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        current = subs[0].choices[word]
    return current


def _bus_commands(sub: _Only) -> None:
    p = sub.add_parser("join", help=_summary("join"))
    p.add_argument("name", metavar="NAME", help="the name to register, without the @")
    p.add_argument("--pane", help="the tmux pane id the agent runs in, e.g. %%3")
    p.add_argument(
        "--agent",
        help="the kind of agent in the pane (default: claude with --pane, none without)",
    )
    _add_no_watch(p)
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_join"))

    p = sub.add_parser("leave", help=_summary("leave"))
    p.add_argument("name", metavar="NAME", nargs="?", help="the name to remove (default: yours)")
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_leave"))

    p = sub.add_parser("inbox", help=_summary("inbox"))
    p.add_argument("--peek", action="store_true", help="show without marking read")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_identity(p)
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_inbox"))

    p = sub.add_parser("history", help=_summary("history"))
    p.add_argument(
        "count", metavar="N", nargs="?", type=_count, default=20, help="how many (default 20)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_history"))

    p = sub.add_parser("who", help=_summary("who"))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_who"))


def _room_commands(sub: _Only) -> None:
    p = sub.add_parser("tree", help=_summary("tree"))
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_tree"))

    p = sub.add_parser("approve", help=_summary("approve"))
    p.add_argument(
        "id", metavar="ID", type=_message_id, help="the handover's id (handovers lists them)"
    )
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_approve"))

    p = sub.add_parser("reject", help=_summary("reject"))
    p.add_argument(
        "id", metavar="ID", type=_message_id, help="the handover's id (handovers lists them)"
    )
    p.add_argument("--reason", required=True, help="why: the sender receives it")
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_reject"))

    p = sub.add_parser("handovers", help=_summary("handovers"))
    p.add_argument("--json", action="store_true", help="print JSON (with the prepared context)")
    p.set_defaults(handler=_lazy("agent_room.cli.bus", "cmd_handovers"))
    _handover_show(p)


def _operator_commands(sub: _Only) -> None:
    p = sub.add_parser("status", help=_summary("status"))
    p.add_argument(
        "--format",
        metavar="FORMAT",
        help="e.g. '⚑{handovers} ⏸{waiting} ✗{failed}' (also {frozen}, {messages})",
    )
    p.set_defaults(handler=_lazy("agent_room.cli.status", "cmd_status"))


def _handover_show(handovers: Any) -> None:
    """``handovers show ID``: one handover with the code it carries."""
    hsub = _commands(handovers, "handovers", "[show ID]", required=False)
    hp = hsub.add_parser(
        "show",
        help="one handover in full: its body, prepared context and code against the recipient",
    )
    hp.add_argument("id", metavar="ID", type=_message_id, help="the handover's id")
    hp.add_argument("--json", action="store_true", help="print JSON")
    hp.set_defaults(handler=_lazy("agent_room.cli.worktrees", "cmd_handover_show"))
