"""Entering a session from the console: plan in a thread, confirm, then go.

Mixed into the app. The plan is ``room.enter``'s (the same as ``agent-room enter``);
a switch runs in a thread worker, an attach suspends the console on the main thread
until the user detaches, and a resume asks first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import SuspendNotSupported

from agent_room.core.enter import Move, Plan, parent_note
from agent_room.core.errors import RoomError
from agent_room.ui.messages import EnterPlanned, RefreshWanted

if TYPE_CHECKING:
    from textual.app import App

    from agent_room.core.ports import Multiplexer, ProcessProbe
    from agent_room.room import Room
    from agent_room.room.enter import Navigator, Where

    _Base = App[int]
else:
    _Base = object


class EnterMixin(_Base):
    """Enter / resume for the console app."""

    probe: ProcessProbe
    where: Where

    if TYPE_CHECKING:

        @property
        def mux(self) -> Multiplexer:
            """The multiplexer port."""
            ...

        def open_room(self) -> Room:
            """A fresh connection for one worker thread."""
            ...

    def _navigator(self, room: Room) -> Navigator:
        import os

        from agent_room.plugin import claude_flags
        from agent_room.room.enter import Navigator

        claude = os.environ.get("AGENT_ROOM_CLAUDE") or "claude"
        return Navigator(room, self.mux, self.probe, claude=claude, claude_args=claude_flags())

    def start_enter(self, name: str) -> None:
        """Plan entering the session ``name`` (in a thread: SQLite and tmux block)."""
        self._enter_plan(name)

    @work(thread=True, group="enter", exclusive=True, exit_on_error=False)
    def _enter_plan(self, name: str) -> None:
        room = self.open_room()
        try:
            nav = self._navigator(room)
            plan = nav.plan(nav.find(name, wait=0), self.where)
            if plan.move in (Move.SWITCH, Move.ATTACH):
                nav.remember(plan, self.where)
            self.post_message(EnterPlanned(plan))
        except RoomError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error")
        finally:
            room.close()

    def on_enter_planned(self, message: EnterPlanned) -> None:
        """Refuse, confirm a resume, switch, or attach."""
        plan = message.plan
        target = plan.target
        if plan.move is Move.REFUSE:
            self.notify(plan.reason, title="Cannot enter", severity="error", timeout=8)
            return
        for warning in plan.warnings:
            if plan.move is not Move.RESUME:
                self.notify(warning, severity="warning")
        if plan.move is Move.RESUME:
            from agent_room.ui.screens.modals import ConfirmScreen

            def answered(yes: bool | None) -> None:
                if yes:
                    self._enter_resume(plan)

            detail = "\n".join(
                [*plan.warnings, f"Runs `{' '.join(plan.argv)}` in a new tmux window in",
                 f"{target.cwd or 'its last directory'}."]
            )  # fmt: skip
            self.push_screen(ConfirmScreen(f"Resume @{target.name}?", detail), answered)
        elif plan.move is Move.SWITCH:
            self._enter_switch(plan)
        else:
            self._enter_attach(plan)

    @work(thread=True, group="enter", exit_on_error=False)
    def _enter_resume(self, plan: Plan) -> None:
        room = self.open_room()
        try:
            nav = self._navigator(room)
            moved = nav.start_resume(plan, self.where)
            nav.remember(plan, self.where)
            self.post_message(EnterPlanned(moved))
        except (RoomError, RuntimeError) as exc:
            self.call_from_thread(self.notify, f"resume failed: {exc}", severity="error")
        finally:
            room.close()

    @work(thread=True, group="enter", exit_on_error=False)
    def _enter_switch(self, plan: Plan) -> None:
        target = plan.target
        assert target.pane is not None
        try:
            self.mux.switch_client(target.socket or self.where.socket, target.pane)
        except RuntimeError as exc:
            self.call_from_thread(self.notify, f"tmux: {exc}", severity="error")
            return
        note = parent_note(target)
        self.call_from_thread(
            self.notify,
            f"Switched to @{target.name} ({target.pane}). Back: prefix L,"
            " or agent-room exit-agent there." + (f"\n{note}" if note else ""),
        )

    def _enter_attach(self, plan: Plan) -> None:
        target = plan.target
        assert target.pane is not None
        try:
            with self.suspend():
                self.mux.attach(target.socket, target.pane)
        except SuspendNotSupported:
            socket = f"-S {target.socket} " if target.socket else ""
            self.notify(
                f"This terminal cannot suspend the console: run tmux {socket}attach -t"
                f" {target.pane}",
                severity="warning",
            )
        except RuntimeError as exc:
            self.notify(f"tmux: {exc}", severity="error")
        self.post_message(RefreshWanted())
