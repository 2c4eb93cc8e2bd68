"""``agent-room demo``: a room a newcomer can watch, with nothing else installed.

By default a private tmux server with four simulated agents (``agent_room.demo``), the
delivery worker and the console; ``--claude`` runs real Claude Code clients against the
built-in model stand-in instead. In a terminal it attaches; ``--detach`` only sets it up;
without a terminal it runs for a while, prints the room and stops. ``--stop`` ends the
demo this terminal uses (or the one named, or ``all``). ``--script`` is the short
scripted walk-through of the bus (no tmux): two agents join, one sends a message and a
handover, the operator approves, the other reads its inbox.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agent_room.cli.params import SECONDS
from agent_room.core.handover import HandoverFields
from agent_room.demo import room as demo_room
from agent_room.demo.folder import POINTERS, forget_hint
from agent_room.room.service import Room
from agent_room.turn.core.errors import NotFound
from agent_room.turn.core.format import format_terminal_messages
from agent_room.turn.core.printable import printable
from agent_room.turn.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from agent_room.demo.room import Demo

LOOK = 60.0
"""Seconds a demo without a terminal runs at most before it prints the room and stops."""


def cmd_demo(
    *, claude: bool, codex: bool, gemini: bool, detach: bool, seconds: float | None
) -> int:
    """Start the demo room: attach, detach or (``seconds``, or no terminal) a short look."""
    clients = [k for k, wanted in (("codex", codex), ("gemini", gemini)) if wanted]
    demo = demo_room.start(os.environ, claude=claude, clients=clients)
    kind = "real Claude Code clients" if claude else "four simulated agents"
    if clients:
        kind += ", " + " and ".join(
            {"codex": "a Codex CLI (@reviewer)", "gemini": "a Gemini CLI (@docs)"}[k]
            for k in clients
        )
    attach = " ".join(demo.attach_argv())
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if detach:
        sys.stdout.write(demo.exports())
        print(
            f"The demo room runs with {kind} in {demo.root}.\n"
            f"Watch it: {attach}   (detach: C-b d)\n"
            f"Use {_me()} on it: {_exports_told()}\n"
            f"Stop it: {_me()} demo --stop {demo.root}",
            file=sys.stderr,
        )
        return 0
    if terminal and seconds is None:
        return _attach(demo, kind)
    return _look(demo, kind, LOOK if seconds is None else seconds)


def _exports_told() -> str:
    """What to do with the export lines: on a terminal they are above; captured, as by
    ``eval "$(agent-room demo --detach)"``, they have already been taken."""
    if sys.stdout.isatty():
        return "eval the two export lines above."
    return "the two export lines it printed on standard output point it there, where eval ran them."


def _attach(demo: Demo, kind: str) -> int:
    """Attach this terminal; once it detaches, say how to come back and how to stop."""
    print(f"Attaching to the demo room ({kind}). Detach: C-b d.", flush=True)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    subprocess.run(demo.attach_argv(), env=env, check=False)
    if not demo.root.is_dir():
        print("The demo room has stopped.")
        return 0
    print(
        f"You left the demo room; it is still running in {demo.root}.\n"
        f"Back to it:  {' '.join(demo.attach_argv())}\n"
        f"Stop it:     {_me()} demo --stop {demo.root}"
    )
    return 0


def _me() -> str:
    """How to run this agent-room again: its name when the PATH finds this one, else
    its full path (after .ci/demo it is only in the checkout's .venv/bin)."""
    script = Path(sys.argv[0])
    found = shutil.which("agent-room")
    if script.name != "agent-room" or (found and Path(found).resolve() == script.resolve()):
        return "agent-room"
    here = Path.cwd()
    full = script.absolute()
    return f"./{full.relative_to(here)}" if full.is_relative_to(here) else str(full)


def _on_path_hint() -> str:
    """How to put agent-room on the PATH, when this one is not there."""
    if _me() == "agent-room":
        return ""
    return "\nTo type agent-room alone, install it on your PATH: pipx install . (see the README)."


def list_demos() -> int:
    """Print the folder of each demo room of the user."""
    for demo in demo_room.running():
        print(demo.root)
    return 0


def stop_demos(which: str) -> int:
    """Stop this terminal's demo room, the one named, or (``all``) every one of the user."""
    if which == "all":
        stopped = list(demo_room.running())
    elif which:
        stopped = [demo_room.named(which)]
    else:
        mine = demo_room.current(os.environ)
        others = [str(demo.root) for demo in demo_room.running()]
        if mine is None and others:
            raise NotFound(
                "this terminal uses no demo room; name one: agent-room demo --stop DIR"
                f" (yours: {', '.join(others)}; or --stop all)"
            )
        stopped = [mine] if mine else []
    if not stopped:
        print("no demo room of yours is running", file=sys.stderr)
    for demo in stopped:
        demo_room.stop(demo)
        print(f"stopped the demo room in {demo.root}", file=sys.stderr)
        if any(Path(os.environ.get(v) or "/").parent == demo.root for v in POINTERS):
            print(
                f"this shell still points agent-room at it: {forget_hint()}"
                " (then agent-room uses your own room)",
                file=sys.stderr,
            )
    return 0


def _look(demo: Demo, kind: str, seconds: float) -> int:
    """Without a terminal: let the room run until it shows everything, print it, stop."""
    print(f"A demo room with {kind} in {demo.root} (no terminal: a short look)", flush=True)
    room = Room.open({"AGENT_ROOM_HOME": str(demo.home)})
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not _settled(room):
            time.sleep(0.5)
        print("\n$ agent-room who")
        for row in room.who():
            note = f"  ({row['delivery']})" if row["delivery"] else ""
            shown = printable(f"pane {row['pane']}{note}")
            print(f"  @{row['name']:<9} {row['state']:<8} {shown}")
        print("\n$ agent-room handovers")
        for row in room.pending_handovers():
            print(f"  #{row['message_id']}  @{row['sender']} -> @{row['recipient']}")
        print("\n$ agent-room history")
        sys.stdout.write(format_terminal_messages(room.history(10)))
    finally:
        room.close()
        demo_room.stop(demo)
    print(
        f"\nThe demo room is gone again. In a terminal, `{_me()} demo` lets you watch it."
        + _on_path_hint()
    )
    return 0


def _settled(room: Room) -> bool:
    """The story has been told: a handover waits, a dialog is open, messages went out."""
    states = {row["name"]: row["state"] for row in room.who()}
    delivered = [m for m in room.history(50) if m["status"] == "delivered"]
    return (
        len(states) >= 4
        and "waiting" in states.values()
        and bool(room.pending_handovers())
        and len(delivered) >= 2
    )


def _say(text: str, pause: float) -> None:
    print(f"\n\033[1m$ {text}\033[0m", flush=True)
    time.sleep(pause)


def walk_through(*, fast: bool) -> int:
    """The scripted walk-through of the bus, in a throw-away room (no tmux)."""
    pause = 0.0 if fast else 0.6
    with tempfile.TemporaryDirectory(prefix="agent-room-demo-") as tmp:
        room = Room(SqliteStore(Path(tmp) / "room"))
        print(f"A throw-away room in {tmp}/room", flush=True)
        _say("agent-room join backend && agent-room join frontend", pause)
        room.join("backend")
        room.join("frontend")
        print("@backend joined the room\n@frontend joined the room")
        _say('AGENT_ROOM_NAME=backend agent-room send @frontend "GET /tasks is live"', pause)
        mid = room.send("backend", "frontend", "GET /tasks is live: { id, title, done }[]")
        print(f"message #{mid} queued for @frontend")
        _say(
            "AGENT_ROOM_NAME=backend agent-room send @frontend --handover --changed ... --todo ...",
            pause,
        )
        hid = room.send_handover(
            "backend",
            "frontend",
            fields=HandoverFields(
                what_changed="Added GET /tasks and PATCH /tasks/:id",
                what_to_do="Build the task list view against the new endpoints",
                files="api/tasks.py; api/schema.py",
                contract="Task = { id: string, title: string, done: boolean }",
            ),
        )
        print(f"handover #{hid} to @frontend is waiting for approval")
        _say(f"agent-room approve {hid}", pause)
        room.approve(hid)
        print(f"handover #{hid} approved")
        _say("AGENT_ROOM_NAME=frontend agent-room inbox", pause)
        sys.stdout.write(format_terminal_messages(room.inbox("frontend")))
        _say("AGENT_ROOM_NAME=backend agent-room inbox", pause)
        sys.stdout.write(format_terminal_messages(room.inbox("backend")))
        room.close()
    print(f"\nThe room is gone again. Run `{_me()} --help` for every command." + _on_path_hint())
    return 0


# The command (loaded by cli.app when it runs).


@click.command("demo")
@click.option("--claude", is_flag=True, help="real Claude Code clients (a built-in model stand-in)")
@click.option("--codex", is_flag=True, help="add a real Codex CLI agent (@reviewer)")
@click.option("--gemini", is_flag=True, help="add a real Gemini CLI agent (@docs)")
@click.option("--detach", is_flag=True, help="set it up and print how to watch and stop it")
@click.option(
    "--stop",
    is_flag=False,
    flag_value="",
    metavar="[DIR|all]",
    help="stop this terminal's demo room, the one in DIR, or all of yours",
)
@click.option("--list", "list_", is_flag=True, help="list your demo rooms")
@click.option(
    "--seconds",
    type=SECONDS,
    metavar="N",
    help="do not attach: run up to N seconds, print the room, stop",
)
@click.option("--script", is_flag=True, help="a short scripted walk-through of the bus (no tmux)")
@click.option("--fast", is_flag=True, help="the walk-through without pauses")
def demo_command(
    claude: bool,
    codex: bool,
    gemini: bool,
    detach: bool,
    stop: str | None,
    list_: bool,
    seconds: float | None,
    script: bool,
    fast: bool,
) -> int:
    if script or fast:
        return walk_through(fast=fast)
    if stop is not None:
        return stop_demos(stop)
    if list_:
        return list_demos()
    return cmd_demo(claude=claude, codex=codex, gemini=gemini, detach=detach, seconds=seconds)
