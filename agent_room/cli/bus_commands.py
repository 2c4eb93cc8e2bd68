"""The click commands whose handlers live in modules kept free of click: ``cli.bus``
and the turn path's ``status`` (a status bar runs it every few seconds, on the turn
path; ``--help`` and a bad option come here). Loaded by ``cli.app`` when one of
them runs.
"""

from __future__ import annotations

import os

import click

from agent_room.cli.bus import (
    cmd_approve,
    cmd_handovers,
    cmd_history,
    cmd_inbox,
    cmd_join,
    cmd_leave,
    cmd_reject,
    cmd_tree,
    cmd_who,
)
from agent_room.cli.params import (
    COUNT,
    MESSAGE_ID,
    Group,
    as_option,
    json_option,
    no_watch_option,
    own,
)
from agent_room.turn.status import print_status

HANDOVER_ID = click.argument(
    "id", metavar="ID", type=MESSAGE_ID, help="the handover's id (handovers lists them)"
)


@click.command("join")
@click.argument("name", metavar="NAME", help="the name to register, without the @")
@click.option("--pane", help="the tmux pane id the agent runs in, e.g. %3")
@click.option(
    "--agent", help="the kind of agent in the pane (default: claude with --pane, none without)"
)
@no_watch_option
def join_command(name: str, pane: str | None, agent: str | None, no_watch: bool) -> int:
    return cmd_join(name=name, pane=pane, agent=agent, no_watch=no_watch)


@click.command("leave")
@click.argument("name", metavar="NAME", required=False, help="the name to remove (default: yours)")
def leave_command(name: str | None) -> int:
    return cmd_leave(name=name)


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


@click.command("who")
@json_option
def who_command(as_json: bool) -> int:
    return cmd_who(as_json=as_json)


@click.command("tree")
@json_option
def tree_command(as_json: bool) -> int:
    return cmd_tree(as_json=as_json)


@click.command("approve")
@HANDOVER_ID
def approve_command(id: int) -> int:
    return cmd_approve(id=id)


@click.command("reject")
@HANDOVER_ID
@click.option("--reason", required=True, help="why: the sender receives it")
def reject_command(id: int, reason: str) -> int:
    return cmd_reject(id=id, reason=reason)


@click.group(
    "handovers",
    cls=Group,
    lazy={"show": "agent_room.cli.worktrees:handover_show_command"},
    invoke_without_command=True,
    subcommand_metavar="[show ID]",
)
@click.option("--json", "as_json", is_flag=True, help="print JSON (with the prepared context)")
@click.pass_context
def handovers_command(ctx: click.Context, as_json: bool) -> int:
    return own(ctx, lambda: cmd_handovers(as_json=as_json))


@click.command("status")
@click.option(
    "--format",
    "format_",
    metavar="FORMAT",
    help="e.g. '⚑{handovers} ⏸{waiting} ✗{failed}' (also {frozen}, {messages})",
)
def status_command(format_: str | None) -> int:
    return print_status(format_, os.environ)
