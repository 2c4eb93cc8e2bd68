"""``agent-room enter NAME|ID`` and ``agent-room exit-agent [--root]`` (seed 003).

Enter switches the terminal to an agent's live tmux pane, or resumes its ended session
with ``claude --resume`` in a new window in its cwd, and remembers where you came from;
exit-agent goes back one jump (or to the first with ``--root``). The plugin's
``/enter-agent`` and ``/exit-agent`` run these. Diagnostics go to stderr.
"""

from __future__ import annotations

import os
import sys

import click

from agent_room.adapters.processes import SystemProbe
from agent_room.adapters.tmux import Tmux, TmuxError
from agent_room.cli.params import SECONDS
from agent_room.config.settings import RoomSettings
from agent_room.core.enter import Move, Plan, parent_note
from agent_room.plugin import claude_flags
from agent_room.room.enter import Navigator, Where
from agent_room.room.service import Room
from agent_room.turn.core.errors import Refused
from agent_room.turn.core.names import tmux_socket_of
from agent_room.turn.core.printable import printable


def _say(text: str) -> None:
    # names are checked, but a cwd, a pane or a stored command line may hold anything
    print(f"agent-room: {printable(text, multiline=True)}", file=sys.stderr, flush=True)


def _navigator() -> tuple[Room, Navigator]:
    room = Room.open(os.environ)
    flags = claude_flags()
    return room, Navigator(room, Tmux(), SystemProbe(), programs=_programs, claude_args=flags)


def _programs() -> dict[str, str]:
    """The clients' programs, from the room's settings: read only to resume, so that a
    jump to a live pane (``/enter-agent``, ``/exit-agent``) does not wait about 100 ms
    for pydantic to load."""
    return RoomSettings.load(os.environ).programs()


def where_am_i(room: Room, environ: dict[str, str] | os._Environ[str]) -> Where:
    """The caller's tmux server, pane and session, from its environment."""
    pane = environ.get("TMUX_PANE") or None
    socket = tmux_socket_of(environ.get("TMUX"))
    session_id = environ.get("CLAUDE_CODE_SESSION_ID") or None
    actor = environ.get("AGENT_ROOM_NAME") or ""
    row = room.store.holder_of_pane(pane) if pane else None
    if not actor and row:
        actor = str(row["name"])
    if session_id is None and row and row["state"] != "ended":
        # a client that does not say its session (or a shell in the agent's pane): the
        # pane's session is where this jump comes from, so exit-agent can walk back to it
        session_id = row["session_id"]
    tty = None
    if socket is None and sys.stdin.isatty():
        tty = os.ttyname(sys.stdin.fileno())  # an attach from here is left by detaching it
    return Where(
        socket=socket, pane=pane, session_id=session_id, actor=actor or "operator", tty=tty
    )


def _go(nav: Navigator, plan: Plan, where: Where, *, remember: bool) -> None:
    for warning in plan.warnings:
        _say(f"warning: {warning}")
    if plan.move is Move.REFUSE:
        raise Refused(plan.reason)
    target = plan.target
    attaches = plan.move is Move.ATTACH or (plan.move is Move.RESUME and where.socket is None)
    if attaches and not (sys.stdin.isatty() and sys.stdout.isatty()):
        where_it_runs = (
            f"resuming {target.label} starts it in a new tmux session to attach to"
            if plan.move is Move.RESUME
            else f"{target.label} runs in tmux pane {target.pane}"
        )
        raise Refused(
            f"{where_it_runs}, but this is not a terminal to attach: run it from a"
            " terminal or inside tmux"
        )
    if plan.move is Move.RESUME:
        _say(f"resuming {target.label} ({' '.join(plan.argv)}) in {target.cwd or 'its cwd'}")
    note = parent_note(target) if remember else None
    if note:
        _say(note)  # before going: an attach takes the screen over
    if remember:
        nav.remember(plan, where)
    if attaches:  # the attach takes the screen until the terminal is detached
        _say(f"entering {target.label}; come back: detach (C-b d) or agent-room exit-agent")
    try:
        pane = nav.carry_out(plan, where)
    except TmuxError as exc:
        raise Refused(f"tmux: {exc}") from None
    if plan.move is Move.DETACH:
        _say(f"detached the terminal {plan.reason} you entered from")
    elif not remember:  # exit-agent: gone back
        _say(f"back in {target.label}" + (f" (pane {pane})" if target.name else ""))
    elif attaches:
        _say(f"back from {target.label}")
    else:
        _say(f"entered {target.label} in pane {pane}; back with: agent-room exit-agent")


def cmd_enter(*, who: str, force: bool, wait: float) -> int:
    """Enter the agent NAME (or session ID)."""
    room, nav = _navigator()
    try:
        where = where_am_i(room, os.environ)

        def waiting() -> None:
            _say(f"waiting up to {wait:g} s for {who} to register its session")

        row = nav.find(who, wait=wait, on_wait=waiting)
        plan = nav.plan(row, where, force=force)
        _go(nav, plan, where, remember=True)
    finally:
        room.close()
    return 0


def cmd_exit_agent(*, root: bool) -> int:
    """Go back where this agent was entered from (``--root``: to the first)."""
    room, nav = _navigator()
    try:
        where = where_am_i(room, os.environ)
        current = nav.current_session(where, os.environ.get("AGENT_ROOM_NAME"))
        plan = nav.exit_plan(current, where, root=root)
        _go(nav, plan, where, remember=False)
    finally:
        room.close()
    return 0


# The commands (loaded by cli.app when they run).


@click.command("enter")
@click.argument("who", metavar="NAME|ID", help="the agent's @name or its session id")
@click.option("--force", is_flag=True, help="resume even if the session is live elsewhere")
@click.option(
    "--wait",
    type=SECONDS,
    default=10.0,
    metavar="SECONDS",
    help="how long to wait for a just-started session to register (default: 10)",
)
def enter_command(who: str, force: bool, wait: float) -> int:
    return cmd_enter(who=who, force=force, wait=wait)


@click.command("exit-agent")
@click.option("--root", is_flag=True, help="go back to the first session of the chain")
def exit_agent_command(root: bool) -> int:
    return cmd_exit_agent(root=root)
