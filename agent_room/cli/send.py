"""``agent-room send`` on click: its parameters for ``--help`` and the CLI reference.

The words themselves are read by ``turn.send.parse_send``, the one parser of every
shape of ``send``, written for the turn path without click; a process running ``send``
meets this module only for the shapes the turn path leaves (a handover, a link, a body
from a file or stdin) and for help. The handler is ``send_message``, below.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from agent_room.cli.messages import me, read_body
from agent_room.cli.params import as_option
from agent_room.room.outbox import SendRequest, check_fields, send
from agent_room.room.service import Room
from agent_room.turn.send import parse_send


class OneParser(click.Command):
    """A command whose words go to ``parse_send``; click shows its help alone."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """The fields ``parse_send`` reads (its errors are the room's one line, exit 2)."""
        fields = parse_send(args)
        if fields is None:
            return super().parse_args(ctx, ["--help"])
        ctx.params = fields
        return []


@click.command("send", cls=OneParser)
@click.argument("recipient", metavar="@NAME", help="the recipient, e.g. @frontend")
@click.argument("text", metavar="TEXT", nargs=-1, help="the body (else --file or stdin)")
@click.option("--file", metavar="FILE", help="read the body from a file ('-' for stdin)")
@click.option("--handover", is_flag=True, help="a handover: held until the operator approves it")
@click.option("--changed", default="", help="handover: what changed")
@click.option("--files", default="", help="handover: files affected")
@click.option("--todo", default="", help="handover: what the recipient needs to do")
@click.option("--contract", default="", help="handover: schema / contract details")
@click.option("--breaking", default="", help="handover: breaking changes")
@click.option(
    "--link",
    is_flag=True,
    help="open a link to @NAME (or reuse the open one): your turns' final outputs cross",
)
@click.option(
    "--close-link",
    is_flag=True,
    help="deliver TEXT, then sever your link to @NAME (its initiator only)",
)
@as_option
def send_command(**fields: Any) -> int:
    # the fields are parse_send's (``OneParser``)
    return send_message(**fields)


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
    room = Room.open(os.environ)
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
