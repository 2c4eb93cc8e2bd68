"""``agent-room status`` at the command line: ``--help`` and a bad option (its common
shapes run on the turn path, ``agent_room.turn.status``, which prints for this too)."""

from __future__ import annotations

import os

import click

from agent_room.turn.status import print_status


@click.command("status")
@click.option(
    "--format",
    "format_",
    metavar="FORMAT",
    help="e.g. '⚑{handovers} ⏸{waiting} ✗{failed}' (also {frozen}, {messages})",
)
def status_command(format_: str | None) -> int:
    return print_status(format_, os.environ)
