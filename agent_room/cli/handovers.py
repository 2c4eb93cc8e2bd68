"""``handovers``, ``approve`` and ``reject``: the handovers waiting for the operator's
decision, at the command line (the console's queue shows the same)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from agent_room.cli.output import print_json
from agent_room.cli.params import MESSAGE_ID, Group, own
from agent_room.cli.worktrees import approve, previews
from agent_room.room.service import Room
from agent_room.store import memory
from agent_room.turn.core.cycles import render_cycle
from agent_room.turn.core.format import iso_timestamp
from agent_room.turn.core.printable import printable

HANDOVER_ID = click.argument(
    "id", metavar="ID", type=MESSAGE_ID, help="the handover's id (handovers lists them)"
)


def cmd_approve(*, id: int) -> int:

    approve(Room.open(os.environ), id)
    print(f"handover #{id} approved", file=sys.stderr)
    return 0


def cmd_reject(*, id: int, reason: str) -> int:
    Room.open(os.environ).reject(id, reason)
    print(f"handover #{id} rejected", file=sys.stderr)
    return 0


def _handover_json(row: dict[str, Any]) -> dict[str, Any]:
    """A pending handover as ``handovers --json`` prints it: its fields an object, not a
    JSON string inside JSON, and its times ISO strings as ``history``'s timestamps are."""

    out = dict(row)
    if isinstance(out.get("fields"), str):
        out["fields"] = json.loads(out["fields"])
    for key in ("requested_at", "decided_at"):
        if out.get(key) is not None:
            out[key] = iso_timestamp(out[key])
    return out


def cmd_handovers(*, as_json: bool) -> int:

    room = Room.open(os.environ)
    rows = room.pending_handovers()
    cycles = room.handover_cycles(rows)
    contexts = memory.contexts(room.store, [int(r["message_id"]) for r in rows])
    for row in rows:
        cycle = cycles.get(int(row["message_id"]))
        row["cycle"] = list(cycle) if cycle else None
        row["cycle_text"] = render_cycle(cycle) if cycle else None
        row["context"] = contexts.get(int(row["message_id"]))  # what the console previews

    code = previews(room, rows)
    if as_json:
        print_json([{**_handover_json(row), "code": code[row["message_id"]]} for row in rows])
        return 0
    for row in rows:
        badge = f"  ⚠ closes a cycle: {row['cycle_text']}" if row["cycle"] else ""
        print(f"#{row['message_id']}  @{row['sender']} -> @{row['recipient']}{badge}")
        if row["context"]:
            lines = len(row["context"].splitlines())
            print(f"    context: {lines} lines (agent-room handovers show {row['message_id']})")
        preview = code[row["message_id"]]
        if preview:
            print(f"    {printable(str(preview['summary']))}")
    if not rows:
        print("no handovers waiting", file=sys.stderr)
    return 0


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
