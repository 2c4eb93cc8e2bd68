"""``agent-room send`` on click: its parameters for ``--help`` and the CLI reference.

The words themselves are read by ``turn.send.parse_send``, the one parser of every
shape of ``send``, written for the turn path without click; a process running ``send``
meets this module only for the shapes the turn path leaves (a handover, a link, a body
from a file or stdin) and for help. The handler is ``cli.messages.send_message``,
beside ``inbox`` and ``history``.
"""

from __future__ import annotations

from typing import Any

import click

from agent_room.cli.messages import send_message
from agent_room.cli.params import as_option
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
