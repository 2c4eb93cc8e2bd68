"""``join`` and ``leave``: a name registered by hand, or removed (an agent in a pane
without hooks; ``start`` joins the agents it starts)."""

from __future__ import annotations

import os
import sys

import click

from agent_room.cli.background import ensure_deliverer
from agent_room.cli.messages import me
from agent_room.cli.params import no_watch_option
from agent_room.config.settings import RoomSettings
from agent_room.room.service import Room
from agent_room.turn.core.names import tmux_socket_of
from agent_room.turn.core.printable import printable
from agent_room.turn.store.home import room_home
from agent_room.turn.store.wake import listening


def cmd_join(*, name: str, pane: str | None, agent: str | None, no_watch: bool) -> int:
    opted_out = no_watch or not pane or _deliverer_listens()
    if not opted_out:  # read before anything is written: a bad setting changes nothing
        opted_out = not RoomSettings.load(os.environ).watch
    room = Room.open(os.environ)
    socket = tmux_socket_of(os.environ.get("TMUX"))
    kind = agent or ("claude" if pane else "")  # a name alone runs no agent
    row = room.join(name, pane=pane, agent=kind, tmux_socket=socket)
    where = f" in pane {printable(row['pane'])}" if row["pane"] else ""
    if row.get("renamed_from"):
        print(f"@{row['renamed_from']}{where} is now @{row['name']}", file=sys.stderr)
        return 0
    print(f"@{row['name']} joined the room{where}", file=sys.stderr)
    if row["pane"]:  # an agent a deliverer can reach
        ensure_deliverer(os.environ, opted_out=opted_out)
    return 0


def _deliverer_listens() -> bool:
    """Whether the room's deliverer listens already (then join needs no settings)."""
    return listening(room_home(os.environ))


def cmd_leave(*, name: str | None) -> int:
    room = Room.open(os.environ)
    leaving = name or me(room, None)
    room.leave(leaving)
    print(f"@{leaving} left the room", file=sys.stderr)
    return 0


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
