"""Enter and exit: find the session, wait for a fresh one, plan, remember, carry out.

Seed 003's behaviour for ``agent-room enter`` / ``exit-agent`` and for the console's
Enter key. The decision is ``core.enter.plan_enter``; this module gathers its facts
(from the store, the process probe and the multiplexer passed in) and carries the plan
out through the multiplexer port. It never prints: callers show the warnings.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_room.adapters.transcripts import read_lines
from agent_room.core.enter import (
    FRESH_SESSION_WAIT,
    Entry,
    Move,
    Plan,
    Target,
    exit_chain,
    plan_enter,
)
from agent_room.core.heal import transcript_state
from agent_room.core.ports import Multiplexer
from agent_room.room.clients import resume_argv
from agent_room.room.service import Room
from agent_room.store import views
from agent_room.turn.core.errors import BadInput, NotFound, Refused
from agent_room.turn.core.names import is_valid_name
from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.room.registry import Registry, SessionFacts

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

POLL = 0.25
"""Seconds between looks at the registry while waiting for a fresh session."""


class Where:
    """Where the caller is: its tmux server and pane, and its own session if an agent."""

    def __init__(
        self,
        *,
        socket: str | None,
        pane: str | None,
        session_id: str | None,
        actor: str,
        tty: str | None = None,
    ) -> None:
        self.socket = socket
        """The tmux server the caller runs in (``None``: not inside tmux)."""
        self.tty = tty
        """The caller's terminal when it is not inside tmux: an attach there is left by
        detaching that terminal's client."""
        self.pane = pane
        self.session_id = session_id
        self.actor = actor
        """Who is recorded as making the jump: an agent's name or ``operator``."""


class Navigator:
    """Enter and exit for one room."""

    def __init__(
        self,
        room: Room,
        mux: Multiplexer,
        probe: ProcessProbe,
        *,
        programs: Callable[[], Mapping[str, str]] = dict,
        claude_args: tuple[str, ...] = (),
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.room = room
        self.store = room.store
        self.mux = mux
        self.probe = probe
        self._read_programs = programs
        """The clients' programs (``RoomSettings.programs``), read at the first resume:
        entering a live pane needs none, and reading the settings loads pydantic."""
        self._programs: Mapping[str, str] | None = None
        self.claude_args = claude_args
        """Put before ``--resume``: the plugin, without which the resumed client's hooks
        would not fire and it would never register again."""
        self.sleep = sleep
        self.monotonic = monotonic

    # -- finding ----------------------------------------------------------------------

    def lookup(self, who: str) -> Row | None:
        """The session named ``who`` (``@name`` or name) or with that session id."""
        text = who.strip().removeprefix("@")
        if not text:
            raise BadInput("name the agent to enter: NAME or a session id")
        row = self.store.session(text)
        if row is None and is_valid_name(text):
            row = self.store.holder(text)
        return row

    def _ready(self, row: Row | None) -> bool:
        if row is None:
            return False
        if row["session_id"]:
            return True
        pane = row["pane"]
        return bool(pane) and self.mux.pane_exists(row["tmux_socket"], pane)

    def find(
        self,
        who: str,
        *,
        wait: float = FRESH_SESSION_WAIT,
        on_wait: Callable[[], None] | None = None,
    ) -> Row:
        """The session to enter, waiting up to ``wait`` s for a fresh one to register."""
        deadline = self.monotonic() + wait
        row = self.lookup(who)
        told = False
        while not self._ready(row) and self.monotonic() < deadline:
            if not told and on_wait is not None:
                on_wait()
                told = True
            self.sleep(POLL)
            row = self.lookup(who)
        if row is None:
            waited = f" (waited {wait:g} s)" if wait > 0 else ""
            raise NotFound(f"no session named or with id {who!r} in the room{waited}")
        return row

    def target(self, row: Row) -> Target:
        """The facts ``plan_enter`` needs about a session row."""
        pid = row["pid"]
        process_alive = row["state"] != "ended" and (
            pid is None or self.probe.is_alive(int(pid), row["pid_start"])
        )
        pane = row["pane"]
        pane_alive = bool(pane) and process_alive and self.mux.pane_exists(row["tmux_socket"], pane)
        transcript = row["transcript_path"]
        parent = self.store.session(row["parent"]) if row["parent"] else None
        parent_pid = parent["pid"] if parent is not None else None
        return Target(
            name=str(row["name"]),
            session_id=row["session_id"],
            agent=str(row["agent"]),
            state=str(row["state"]),
            pane=pane,
            socket=row["tmux_socket"],
            cwd=row["cwd"],
            parent=row["parent"],
            process_alive=process_alive,
            pane_alive=pane_alive,
            transcript_missing=bool(transcript) and not Path(transcript).exists(),
            no_conversation=row["state"] == "ended" and not self._had_turn(row),
            parent_name=str(parent["name"]) if parent is not None else None,
            parent_pid=int(parent_pid) if parent_pid is not None else None,
            parent_alive=parent_pid is None
            or self.probe.is_alive(int(parent_pid), parent["pid_start"] if parent else None),
        )

    def _had_turn(self, row: Row) -> bool:
        """Whether the session ever had a turn: one the room recorded, or a prompt or an
        answer at the start of its transcript (a turn whose hooks were lost)."""
        if row["session_id"] and self.store.turns(str(row["session_id"]), limit=1):
            return True
        path = row["transcript_path"]
        head = read_lines(str(path), from_start=True) if path else None
        return head is not None and transcript_state(head[0]) is not None

    def plan(self, row: Row, where: Where, *, force: bool = False) -> Plan:
        """How to enter the session of ``row`` from ``where``."""
        return self._resumed_with_args(
            plan_enter(self.target(row), inside_tmux=where.socket, force=force)
        )

    def _resumed_with_args(self, plan: Plan) -> Plan:
        """A resume's command as ``start`` runs the client: in the room, with the
        agent's own secret for the room's tools (``room.clients.resume_argv``)."""
        target = plan.target
        if plan.move is not Move.RESUME:
            return plan
        # loaded here, not at the top: the console imports this module before its
        # first paint, and the clients' launch code (3 ms) is needed only to resume
        assert target.session_id is not None
        argv = resume_argv(
            target.agent,
            name=target.name,
            session_id=target.session_id,
            cwd=target.cwd or ".",
            home=self.room.home,
            environ=dict(os.environ),
            binary=self.program(target.agent),
            claude_args=self.claude_args,
        )
        return replace(plan, argv=argv)

    def program(self, kind: str) -> str:
        """The program of the client ``kind``: the settings', else its name on the PATH."""
        if self._programs is None:
            self._programs = self._read_programs()
        return self._programs.get(kind, kind)

    # -- carrying out -----------------------------------------------------------------

    def remember(self, plan: Plan, where: Where) -> None:
        """Record the jump so that ``exit-agent`` can go back."""
        if plan.target.session_id is None or plan.target.session_id == where.session_id:
            return
        views.record_entry(
            self.store,
            actor=where.actor,
            to_session=plan.target.session_id,
            from_session=where.session_id,
            from_pane=where.pane,
            from_socket=where.socket,
            at=self.room.clock(),
            from_tty=None if where.socket else where.tty,
        )

    def carry_out(self, plan: Plan, where: Where) -> str | None:
        """Do what the plan says; return the pane gone to (a resume's new pane).

        An ATTACH blocks until the user detaches (the console suspends around it).
        """
        target = plan.target
        if plan.move is Move.REFUSE:
            raise Refused(plan.reason)
        if plan.move is Move.DETACH:
            self.mux.detach_client(target.socket, plan.reason)
            return None
        if plan.move is Move.RESUME:
            plan = self.start_resume(plan, where)
            target = plan.target
        assert target.pane is not None
        if plan.move is Move.SWITCH:
            self.mux.switch_client(target.socket or where.socket, target.pane)
        else:
            self.mux.attach(target.socket, target.pane)
        return target.pane

    def start_resume(self, plan: Plan, where: Where) -> Plan:
        """Open the resumed session's window; return the plan that goes to its pane."""
        target = plan.target
        inside = where.socket is not None
        socket = where.socket if inside else target.socket
        name = f"{target.name}-resumed" if inside else f"ar-{target.name}"
        pane = self.mux.open_window(socket, target.cwd, plan.argv, name=name, inside=inside)
        if target.agent == "codex" and target.session_id:
            self._resumed_in(target.session_id, pane, socket)
        moved = replace(target, pane=pane, socket=socket, pane_alive=True)
        return Plan(Move.SWITCH if inside else Move.ATTACH, moved)

    def _resumed_in(self, session_id: str, pane: str, socket: str | None) -> None:
        """The session lives again in ``pane``: Codex tells its hooks of a resume only at
        the first prompt, and until then another ``enter`` must switch to this pane, not
        start a second writer. Its process is registered by that first prompt's hook
        (nothing is typed into the pane before it)."""
        row = self.store.session(session_id)
        if row is None:
            return
        facts = SessionFacts(
            session_id=session_id,
            cwd=row["cwd"],
            transcript_path=row["transcript_path"],
            pane=pane,
            tmux_socket=socket,
            agent=str(row["agent"]),
            name=str(row["name"]),
        )
        Registry(self.room, self.probe).register(facts)

    # -- exit -------------------------------------------------------------------------

    def current_session(self, where: Where, env_name: str | None) -> Row:
        """The session the caller runs in: by session id, else its pane, else its name."""
        row = self.store.session(where.session_id) if where.session_id else None
        if row is None and where.pane:
            row = self.store.holder_of_pane(where.pane)
        if row is None and env_name and is_valid_name(env_name):
            row = self.store.holder(env_name)
        if row is None:
            raise BadInput(
                "cannot tell which agent session this is: run exit-agent inside an agent"
                " (CLAUDE_CODE_SESSION_ID, a registered tmux pane or AGENT_ROOM_NAME)"
            )
        return row

    def exit_plan(self, current: Row, where: Where, *, root: bool) -> Plan:
        """Where ``exit-agent`` goes: back along recorded jumps, else up the session tree.

        With ``root``, the oldest hop that is still there: a session in the room, or the
        pane a jump was made from (a plain terminal, the console) if it still exists.
        """
        recorded = [
            Entry(
                to_session=str(r["subject"]),
                from_session=r["data"].get("from_session"),
                from_pane=r["data"].get("from_pane"),
                from_socket=r["data"].get("from_socket"),
                from_tty=r["data"].get("from_tty"),
            )
            for r in views.entries(self.store)
        ]
        session_id = current["session_id"]
        chain = (
            exit_chain(recorded, session_id, root=root, pane_sessions=self._pane_sessions(recorded))
            if session_id
            else []
        )
        for step in reversed(chain):
            if step.from_session == session_id:
                continue  # a jump from this very session: not a way out of it
            row = self.store.session(step.from_session) if step.from_session else None
            if row is not None:
                return self._back_to(row, where)
            if step.from_pane and self.mux.pane_exists(step.from_socket, step.from_pane):
                target = _terminal(step.from_pane, step.from_socket)
                return plan_enter(target, inside_tmux=where.socket, warn_parent=False)
            if step.from_pane is None and step.from_tty:
                # the jump came from a terminal outside tmux: its client is detached
                target = _terminal(None, self.target(current).socket)
                return Plan(Move.DETACH, target, reason=step.from_tty)
        parent = self._parent_of(current, root=root)
        if parent is None:
            raise NotFound(
                f"@{current['name']} was not entered from anywhere and has no parent session"
            )
        return self._back_to(parent, where)

    def _pane_sessions(self, entries: list[Entry]) -> dict[str, str]:
        """The session each pane that a jump without a session came from holds."""
        found: dict[str, str] = {}
        for pane in {e.from_pane for e in entries if e.from_session is None and e.from_pane}:
            row = self.store.holder_of_pane(pane)
            if row is not None and row["session_id"]:
                found[pane] = str(row["session_id"])
        return found

    def _parent_of(self, row: Row, *, root: bool) -> Row | None:
        found = None
        seen = {row["session_id"]}
        while row["parent"] and row["parent"] not in seen:
            seen.add(row["parent"])
            parent = self.store.session(row["parent"])
            if parent is None:
                break
            found = row = parent
            if not root:
                break
        return found

    def _back_to(self, row: Row, where: Where) -> Plan:
        return self._resumed_with_args(
            plan_enter(self.target(row), inside_tmux=where.socket, warn_parent=False)
        )


def _terminal(pane: str | None, socket: str | None) -> Target:
    """A plain terminal a jump was made from (a pane, or outside tmux: none), to go back to."""
    return Target(
        name="",
        session_id=None,
        agent="",
        state="idle",
        pane=pane,
        socket=socket,
        cwd=None,
        parent=None,
        process_alive=True,
        pane_alive=True,
    )
