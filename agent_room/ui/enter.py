"""``Entering``: entering a session from the console — plan in a thread, confirm, go.

An object the app owns, given what it needs. The plan is ``room.enter``'s (the same as
``agent-room enter``) and is made in a thread worker that posts ``EnterPlanned``; the
app hands that message back here. A switch runs in a thread worker, an attach suspends
the console on the main thread until the user detaches, and a resume asks first. In a
browser there is no tmux client to switch, so entering is refused there.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from textual.app import App, SuspendNotSupported

from agent_room.core.enter import Move, Plan, parent_note
from agent_room.plugin import claude_flags
from agent_room.room.enter import Navigator, Where
from agent_room.turn.core.errors import RoomError
from agent_room.ui.messages import EnterPlanned, Notice, RefreshWanted
from agent_room.ui.room_work import RoomWork
from agent_room.ui.screens.modals import ConfirmScreen

if TYPE_CHECKING:
    from agent_room.core.ports import Multiplexer
    from agent_room.room.service import Room
    from agent_room.turn.core.ports import ProcessProbe


class Entering:
    """Enter / resume for the console app."""

    def __init__(
        self,
        app: App[int],
        work: RoomWork,
        *,
        mux: Multiplexer | None,
        probe: ProcessProbe,
        where: Where,
        served: bool,
    ) -> None:
        self._app = app
        self._work = work
        self._mux = mux
        self._probe = probe
        self._where = where
        self._served = served
        self._programs: dict[str, str] | None = None
        """The clients' programs, from the room's settings at the first resume."""

    @property
    def mux(self) -> Multiplexer:
        """The multiplexer port (tmux)."""
        assert self._mux is not None
        return self._mux

    def _navigator(self, room: Room) -> Navigator:
        return Navigator(
            room, self.mux, self._probe, programs=self._read_programs, claude_args=claude_flags()
        )

    def _read_programs(self) -> dict[str, str]:
        """The clients' programs, from the room's settings at the first resume (in a
        thread; a bad setting is refused as any room error is). Loaded here, not at the
        top: the console opens without pydantic."""
        if self._programs is None:
            from agent_room.config.settings import RoomSettings

            self._programs = RoomSettings.load(os.environ).programs()
        return self._programs

    def start(self, name: str) -> None:
        """Plan entering the session ``name`` (in a thread: SQLite and tmux block)."""
        if self._served:
            self._app.notify(
                "Entering an agent needs a terminal: run agent-room enter NAME in tmux.",
                severity="warning",
            )
            return
        self._work.run(lambda room: self.plan(room, name), group="enter", exclusive=True)

    def plan(self, room: Room, name: str) -> EnterPlanned:
        """The plan for ``name``, remembered when it moves the client (in a thread)."""
        nav = self._navigator(room)
        plan = nav.plan(nav.find(name, wait=0), self._where)
        if plan.move in (Move.SWITCH, Move.ATTACH):
            nav.remember(plan, self._where)
        return EnterPlanned(plan)

    def planned(self, plan: Plan) -> None:
        """Refuse, confirm a resume, switch, or attach."""
        target = plan.target
        if plan.move is Move.REFUSE:
            self._app.notify(plan.reason, title="Cannot enter", severity="error", timeout=8)
            return
        for warning in plan.warnings:
            if plan.move is not Move.RESUME:
                self._app.notify(warning, severity="warning")
        if plan.move is Move.RESUME:

            def answered(yes: bool | None) -> None:
                if yes:
                    self._work.run(lambda room: self._resume(room, plan), group="enter")

            detail = "\n".join(
                [*plan.warnings, f"Runs `{' '.join(plan.argv)}` in a new tmux window in",
                 f"{target.cwd or 'its last directory'}."]
            )  # fmt: skip
            self._app.push_screen(ConfirmScreen(f"Resume @{target.name}?", detail), answered)
        elif plan.move is Move.SWITCH:
            self._app.run_worker(
                lambda: self._switch(plan), group="enter", thread=True, exit_on_error=False
            )
        else:
            self._attach(plan)

    def _resume(self, room: Room, plan: Plan) -> EnterPlanned | Notice:
        nav = self._navigator(room)
        try:
            moved = nav.start_resume(plan, self._where)
            nav.remember(plan, self._where)
        except (RoomError, RuntimeError) as exc:
            return Notice(f"resume failed: {exc}", severity="error")
        return EnterPlanned(moved)

    def _switch(self, plan: Plan) -> None:
        """Switch the tmux client to the agent's pane (a thread: tmux blocks)."""
        target = plan.target
        assert target.pane is not None
        try:
            self.mux.switch_client(target.socket or self._where.socket, target.pane)
        except RuntimeError as exc:
            self._app.post_message(Notice(f"tmux: {exc}", severity="error"))
            return
        note = parent_note(target)
        self._app.post_message(
            Notice(
                f"Switched to @{target.name} ({target.pane}). Back: prefix L,"
                " or agent-room exit-agent there." + (f"\n{note}" if note else "")
            )
        )

    def _attach(self, plan: Plan) -> None:
        target = plan.target
        assert target.pane is not None
        try:
            with self._app.suspend():
                self.mux.attach(target.socket, target.pane)
        except SuspendNotSupported:
            socket = f"-S {target.socket} " if target.socket else ""
            self._app.notify(
                f"This terminal cannot suspend the console: run tmux {socket}attach -t"
                f" {target.pane}",
                severity="warning",
            )
        except RuntimeError as exc:
            self._app.notify(f"tmux: {exc}", severity="error")
        self._app.post_message(RefreshWanted())
