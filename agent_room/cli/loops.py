"""Handlers of the loop breaker's commands: loops, loops release, loops settings.

The operator's commands: an agent (``AGENT_ROOM_NAME``, its pane or ``--as``) may list
the holds but not release them.
"""

from __future__ import annotations

import json
import os
import sys
import time

import click

from agent_room.cli.links import _caller
from agent_room.cli.params import MESSAGE_ID, Group, as_option, json_option, own
from agent_room.core.links import parse_loop
from agent_room.room.loops import Loops
from agent_room.room.service import Room
from agent_room.turn.core.cycles import render_cycle
from agent_room.turn.core.loops import TURNS, describe, describe_turns, parse_turns
from agent_room.turn.core.printable import printable_json
from agent_room.turn.core.timers import format_duration


def _open() -> Room:
    return Room.open(os.environ)


def cmd_loops(*, active: bool, as_json: bool) -> int:
    """List the loop holds, newest first (``--active``: those still holding)."""
    rows = Loops(_open()).holds(active_only=active)
    if as_json:
        sys.stdout.write(printable_json(rows) + "\n")
        return 0
    if not rows:
        print("no loops held", file=sys.stderr)
        return 0
    now = time.time()
    for r in rows:
        if r["released_at"] is None:
            state = f"HOLDING {r['held']}"
        else:
            state = "dropped" if r["dropped"] else "released"
        age = format_duration(now - r["detected_at"])
        if r.get("reason") == TURNS:  # the turn breaker: the room stopped prompting
            who = " and ".join(f"@{n}" for n in dict.fromkeys(r["cycle"]))
            print(f"#{r['id']}  {state}  turns: the room stopped prompting {who}  {age} ago")
            continue
        print(f"#{r['id']}  {state}  {render_cycle(r['cycle'])}  {r['caught']} caught  {age} ago")
    return 0


def cmd_loops_release(*, id: int, drop: bool, as_name: str | None) -> int:
    """``loops release ID [--drop]``: deliver (or drop) what a hold keeps."""
    room = _open()
    moved = Loops(room).release(id, drop=drop, caller=_caller(room, as_name))
    verb = "dropped" if drop else "released for delivery"
    print(f"loop #{id} released: {moved} held messages {verb}", file=sys.stderr)
    return 0


def cmd_loops_settings(*, threshold: str | None, turns: str | None, as_json: bool) -> int:
    """Show or change the loop breaker's threshold."""
    loops = Loops(_open())
    per_edge, window = loops.settings()
    if threshold is not None:
        per_edge, window = loops.configure(*parse_loop(threshold))
    turn_limits = loops.turn_settings()
    if turns is not None:
        turn_limits = loops.configure_turns(*parse_turns(turns))
    if as_json:
        shown = {"per_edge": per_edge, "window": window}
        shown |= {
            "turns_per_agent": turn_limits[0],
            "turns_per_pair": turn_limits[1],
            "turn_window": turn_limits[2],
        }
        sys.stdout.write(json.dumps(shown) + "\n")
        return 0
    print(f"loop breaker: {describe(per_edge, window)}")
    print(f"turn breaker: {describe_turns(*turn_limits)}")
    return 0


# The commands: loops, loops release, loops settings (loaded by cli.app when they run).


@click.group("loops", cls=Group, invoke_without_command=True)
@click.option("--active", is_flag=True, help="only the holds still holding")
@json_option
@click.pass_context
def loops_command(ctx: click.Context, active: bool, as_json: bool) -> int:
    return own(ctx, lambda: cmd_loops(active=active, as_json=as_json))


@loops_command.command("release")
@click.argument("id", metavar="ID", type=MESSAGE_ID, help="the hold's id (loops lists them)")
@click.option("--drop", is_flag=True, help="cancel the held messages instead")
@as_option
def _release(id: int, drop: bool, as_name: str | None) -> int:
    """Deliver what a loop hold keeps (operator)."""
    return cmd_loops_release(id=id, drop=drop, as_name=as_name)


@loops_command.command("settings")
@click.option(
    "--threshold",
    metavar="N/SECONDS",
    help="messages along every step of a cycle within SECONDS (default 10/60), or off",
)
@click.option(
    "--turns",
    metavar="AGENT/PAIR/SECONDS",
    help="turns the room may cause one agent, and two agents each other, within SECONDS"
    " (default 60/16/300), or off",
)
@json_option
def _settings(threshold: str | None, turns: str | None, as_json: bool) -> int:
    """Show or change the loop breaker's threshold."""
    return cmd_loops_settings(threshold=threshold, turns=turns, as_json=as_json)
