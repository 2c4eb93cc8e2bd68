"""Session commands: ``peek NAME [--turns N] [--tools] [--json]`` and ``rename OLD NEW``.

Who asks: an agent (``AGENT_ROOM_NAME``, its registered live pane, or its
``CLAUDE_CODE_SESSION_ID``), else the operator. A client running inside an agent that
the room does not know is not the operator: it is refused rather than given everything.
The operator peeks at and renames anyone; an agent peeks at itself and its linked peers,
and renames only itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

import click

from agent_room.cli.params import COUNT, json_option
from agent_room.core.transcript import render_turns
from agent_room.room.peek import peek
from agent_room.room.service import Room
from agent_room.turn.core.errors import Refused
from agent_room.turn.core.names import parse_name
from agent_room.turn.core.printable import printable, printable_json


def viewer_of(room: Room, environ: Mapping[str, str]) -> str | None:
    """The agent running the command, or ``None`` for the operator (peek and rename)."""
    if environ.get("AGENT_ROOM_NAME"):  # renamed since it started: still itself
        return room.identify(env_name=environ["AGENT_ROOM_NAME"], pane=None, as_name=None)
    pane = environ.get("TMUX_PANE")
    row = room.store.holder_of_pane(pane) if pane else None
    if row is None and environ.get("CLAUDE_CODE_SESSION_ID"):
        row = room.store.session(environ["CLAUDE_CODE_SESSION_ID"])
    if row is not None and row["state"] != "ended" and row["left_at"] is None:
        return str(row["name"])
    if environ.get("CLAUDECODE") or environ.get("CLAUDE_CODE_SESSION_ID"):
        raise Refused(
            "this runs inside an agent that is not in the room: join the room first, or"
            " run it from the operator's terminal"
        )
    return None


def cmd_peek(*, name: str, turns: int, tools: bool, as_json: bool) -> int:
    """Print the last turns of the agent NAME."""
    room = Room.open(os.environ)
    try:
        seen = peek(room, name, viewer=viewer_of(room, os.environ), turns=turns)
    finally:
        room.close()
    tail = seen.tail
    if as_json:
        data = {
            "name": seen.name,
            "session_id": seen.session_id,
            "state": seen.state,
            "transcript_path": seen.transcript_path,
            "whole_file": tail.whole_file,
            "turns": [turn.to_json(tools=tools) for turn in tail.turns],
        }
        sys.stdout.write(printable_json(data) + "\n")
        return 0
    count = len(tail.turns)
    header = (
        f"@{seen.name} ({seen.state}) · session {seen.session_id} · last {count} turn"
        f"{'s' if count != 1 else ''} of {seen.transcript_path}"
    )
    print(printable(header), file=sys.stderr)
    if not tail.turns:
        print(f"@{seen.name} has no turns in its transcript yet", file=sys.stderr)
        return 0
    # what agents wrote can hold escape sequences: shown, never acted on by the terminal
    sys.stdout.write(printable(render_turns(tail.turns, tools=tools), multiline=True))
    return 0


def cmd_rename(*, old: str, new: str) -> int:
    """Rename the session OLD to NEW."""
    room = Room.open(os.environ)
    try:
        viewer = viewer_of(room, os.environ)
        if viewer is not None and viewer != room.require_member(parse_name(old))["name"]:
            raise Refused(f"@{viewer} may rename only itself: the operator renames any session")
        row = room.rename(old, new, by=viewer or "operator")
    finally:
        room.close()
    moved = int(row["moved"])
    plural = "messages follow" if moved != 1 else "message follows"
    waiting = f"; {moved} waiting {plural} it" if moved else ""
    print(f"@{parse_name(old)} is now @{row['name']}{waiting}", file=sys.stderr)
    return 0


# The commands (loaded by cli.app when they run).


@click.command("peek")
@click.argument("name", metavar="NAME", help="the agent (its @name or session id)")
@click.option("--turns", type=COUNT, default=3, metavar="N", help="how many (default 3)")
@click.option("--tools", is_flag=True, help="show the tool calls and their inputs")
@json_option
def peek_command(name: str, turns: int, tools: bool, as_json: bool) -> int:
    return cmd_peek(name=name, turns=turns, tools=tools, as_json=as_json)


@click.command("rename")
@click.argument("old", metavar="OLD", help="its name now")
@click.argument("new", metavar="NEW", help="the name it gets")
def rename_command(old: str, new: str) -> int:
    return cmd_rename(old=old, new=new)
