"""``inbox`` and ``history``: the room's messages as a person or an agent reads them.

An agent runs ``inbox`` after each nudge, so these two open the room's turn-path core
(``RoomCore``) and load nothing of the rest of the room (``tests/test_layering.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from agent_room.cli.output import print_json
from agent_room.cli.params import COUNT, as_option, json_option
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.format import format_terminal_messages, json_row
from agent_room.turn.room.service import RoomCore


def me(room: RoomCore, as_name: str | None) -> str:
    """Who speaks here: ``AGENT_ROOM_NAME``, the pane's session, or ``--as``."""
    return room.identify(
        env_name=os.environ.get("AGENT_ROOM_NAME"),
        pane=os.environ.get("TMUX_PANE"),
        as_name=as_name,
    )


def read_body(text: Sequence[str], file: str | None, limit: int) -> str | None:
    """The body from TEXT, ``--file`` or piped stdin; ``None`` if none was given."""
    if text and file:
        raise BadInput("give the body as TEXT or --file, not both")
    if text:
        return " ".join(text)
    if file == "-" or (file is None and not sys.stdin.isatty()):
        raw = sys.stdin.buffer.read(limit + 1)
        source = "stdin"
    elif file:
        try:
            with open(file, "rb") as handle:  # noqa: PTH123 - pathlib costs 5 ms here
                raw = handle.read(limit + 1)
        except OSError as exc:
            raise BadInput(f"cannot read {file}: {exc.strerror}") from None
        source = file
    else:
        return None
    if len(raw) > limit:
        raise BadInput(f"the message body is over the limit of {limit} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"the body from {source} is not valid UTF-8 text") from None


def cmd_inbox(*, peek: bool, as_json: bool, as_name: str | None) -> int:
    room = RoomCore.open(os.environ)
    rows = room.inbox(me(room, as_name), peek=peek)
    if as_json:
        print_json([json_row(r) for r in rows])
    elif rows:
        sys.stdout.write(format_terminal_messages(rows))
    else:
        print("no new messages", file=sys.stderr)
    return 0


def cmd_history(*, count: int, as_json: bool) -> int:
    room = RoomCore.open(os.environ)
    try:
        rows = room.history(count)
    finally:
        room.close()
    if as_json:
        print_json([json_row(r) for r in rows])
    else:
        sys.stdout.write(format_terminal_messages(rows))
    return 0


@click.command("inbox")
@click.option("--peek", is_flag=True, help="show without marking read")
@json_option
@as_option
def inbox_command(peek: bool, as_json: bool, as_name: str | None) -> int:
    return cmd_inbox(peek=peek, as_json=as_json, as_name=as_name)


@click.command("history")
@click.argument(
    "count", metavar="N", type=COUNT, default=20, required=False, help="how many (default 20)"
)
@json_option
def history_command(count: int, as_json: bool) -> int:
    return cmd_history(count=count, as_json=as_json)
