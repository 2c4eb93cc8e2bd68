"""``send`` (in the shapes the turn path leaves), ``inbox`` and ``history``: the
messages of the room as a person or an agent reads and sends them at the command line.

The commonest ``send`` never comes here (``agent_room.turn.send``); a handover, a link,
a body from a file or stdin does, through ``cli.send``'s click command.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from agent_room.cli.output import print_json
from agent_room.cli.params import COUNT, as_option, json_option
from agent_room.room import Room
from agent_room.room.outbox import SendRequest, check_fields, send
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.format import format_terminal_messages, json_row


def open_room() -> Room:
    """The room of this environment (``AGENT_ROOM_HOME``)."""
    return Room.open(os.environ)


def me(room: Room, as_name: str | None) -> str:
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


def send_message(
    *,
    recipient: str,
    text: Sequence[str],
    file: str | None,
    handover: bool,
    changed: str,
    files: str,
    todo: str,
    contract: str,
    breaking: str,
    link: bool,
    close_link: bool,
    as_name: str | None,
) -> int:
    """Send a message, a handover or a link's opening or closing to ``recipient``."""
    room = open_room()
    try:
        sender = me(room, as_name)
        request = SendRequest(
            recipient,
            None,
            handover=handover,
            changed=changed,
            todo=todo,
            files=files,
            contract=contract,
            breaking=breaking,
            link=link,
            close_link=close_link,
        )
        check_fields(request)  # before a body is read from stdin
        request.body = read_body(text, file, room.body_limit)
        sent = send(room, sender, request)
    finally:
        room.close()  # before the process ends without its teardown (cli.SHORT)
    for note in sent.notes:
        print(note, file=sys.stderr)
    if not sys.stdout.isatty():  # for a script; a terminal has it in the notes
        print(sent.message_id)
    return 0


def cmd_inbox(*, peek: bool, as_json: bool, as_name: str | None) -> int:
    room = open_room()
    rows = room.inbox(me(room, as_name), peek=peek)
    if as_json:
        print_json([json_row(r) for r in rows])
    elif rows:
        sys.stdout.write(format_terminal_messages(rows))
    else:
        print("no new messages", file=sys.stderr)
    return 0


def cmd_history(*, count: int, as_json: bool) -> int:
    room = open_room()
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
