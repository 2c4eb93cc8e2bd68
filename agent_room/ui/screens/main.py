"""``MainScreen``: the room at a glance — sessions, tree, flow, traffic and handovers.

Holds one ``snapshot`` reactive that the app replaces on every change; each widget is
data-bound to it and redraws its own part. Keys that act on a selection (filter, enter)
live here; decisions and workers live in the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input

from agent_room.core.snapshot import RoomSnapshot
from agent_room.room.snapshot import TRAFFIC_WINDOW
from agent_room.ui.messages import SessionChosen
from agent_room.ui.widgets.flow import FlowTimeline
from agent_room.ui.widgets.handovers import HandoverPreview, HandoverQueue
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.ui.widgets.status import StatusBar
from agent_room.ui.widgets.traffic import TrafficMatrix
from agent_room.ui.widgets.tree import SessionTree

if TYPE_CHECKING:
    from agent_room.room.usage_report import UsageView
    from agent_room.ui.app import RoomConsole
    from agent_room.ui.screens.checkpoints import Resume
    from agent_room.ui.screens.conflicts import Decision


class MainScreen(Screen[None]):
    """The console's one full screen."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (130, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("e", "enter_session", "Enter"),
        Binding("n", "rename_session", "Rename", show=False),
        Binding("c", "checkpoints", "Checkpoints", show=False),
        Binding("dollar_sign", "usage", "Usage", show=False),
    ]

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read; the app replaces it whole."""

    def __init__(self, *, utc: bool = False) -> None:
        super().__init__()
        self.utc = utc
        """Times in UTC (the snapshot tests)."""

    def compose(self) -> ComposeResult:
        """The panels, each bound to the snapshot."""
        yield Header(icon="◎")
        yield Input(placeholder="filter sessions: words in name, agent, state, cwd", id="filter")
        with Horizontal(id="top"):
            yield SessionsTable(id="sessions").data_bind(MainScreen.snapshot)
            yield SessionTree(id="tree").data_bind(MainScreen.snapshot)
        with Horizontal(id="middle"):
            yield FlowTimeline(id="flow", utc=self.utc).data_bind(MainScreen.snapshot)
            yield TrafficMatrix(id="traffic").data_bind(MainScreen.snapshot)
        with Horizontal(id="bottom"):
            yield HandoverQueue(id="queue").data_bind(MainScreen.snapshot)
            yield HandoverPreview(id="preview")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        """Titles of the panels that do not set their own."""
        traffic = self.query_one("#traffic", TrafficMatrix)
        traffic.border_title = f"Who talks to whom · last {TRAFFIC_WINDOW:,} messages"
        self.query_one("#filter", Input).display = False
        self.query_one("#sessions", SessionsTable).focus()
        console = cast("RoomConsole", self.app)
        bar = self.query_one("#status", StatusBar)
        bar.home = console.settings.home
        bar.statuses = tuple(console.statuses.items())
        self.snapshot = console.snapshot

    @property
    def sessions(self) -> SessionsTable:
        """The sessions table."""
        return self.query_one("#sessions", SessionsTable)

    @property
    def queue(self) -> HandoverQueue:
        """The handover queue."""
        return self.query_one("#queue", HandoverQueue)

    def watch_snapshot(self, snapshot: RoomSnapshot | None) -> None:
        """The header counts what waits for the operator."""
        if snapshot is None:
            self.sub_title = "reading the room…"
            return
        pending = snapshot.pending
        live = sum(1 for s in snapshot.sessions if s.live)
        waits = f"⚑ {pending} pending handover{'s' if pending != 1 else ''}"
        for count, what in (
            (snapshot.in_dialog, "⏸ {} in a dialog"),
            (snapshot.failed, "✗ {} failed"),
            (snapshot.operator_unread, "✉ {} for you"),
        ):
            if count:
                waits += " · " + what.format(count)
        self.sub_title = f"{waits} · {live} live / {len(snapshot.sessions)} sessions"

    # -- filter -----------------------------------------------------------------------

    def action_filter(self) -> None:
        """Show the filter field."""
        field = self.query_one("#filter", Input)
        field.display = True
        field.focus()

    def action_clear_filter(self) -> None:
        """Clear and hide the filter."""
        field = self.query_one("#filter", Input)
        field.value = ""
        field.display = False
        self.sessions.filter_text = ""
        self.sessions.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        """Filter as you type."""
        if event.input.id == "filter":
            self.sessions.filter_text = event.value

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the filter goes back to the table, keeping the filter."""
        if event.input.id == "filter":
            event.stop()
            if not event.value:
                event.input.display = False
            self.sessions.focus()

    # -- selection --------------------------------------------------------------------

    def on_session_chosen(self, event: SessionChosen) -> None:
        """The tree pointed at a session: select it in the table."""
        if not self.sessions.select_name(event.name) and self.sessions.filter_text:
            self.action_clear_filter()
            self.sessions.select_name(event.name)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a session enters it."""
        if event.data_table.id == "sessions":
            event.stop()
            self.action_enter_session()

    def action_enter_session(self) -> None:
        """Enter the selected session (the app plans and carries it out)."""
        row = self.sessions.selected
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        if row.outside:  # not the room's: say how to bring it in
            self.notify(f"{row.name} is {row.note}", severity="warning", timeout=15)
            return
        cast("RoomConsole", self.app).start_enter(row.name)

    def action_rename_session(self) -> None:
        """Ask for a new name for the selected session, then rename it."""
        row = self.sessions.selected
        if row is None or row.outside:
            self.notify("No session of the room selected.", severity="warning")
            return
        old = row.name

        def chosen(new: str | None) -> None:
            if new:
                self._rename(old, new)

        from agent_room.ui.screens.modals import RenameScreen

        self.app.push_screen(RenameScreen(old), chosen)

    @work(thread=True, group="rename", exit_on_error=False)
    def _rename(self, old: str, new: str) -> None:
        """Rename through the room service (a thread: SQLite blocks)."""
        from agent_room.core.errors import RoomError
        from agent_room.ui.messages import RefreshWanted

        app = cast("RoomConsole", self.app)
        room = app.open_room()
        try:
            renamed = room.rename(old, new)
            moved = int(renamed["moved"])
            follow = f" ({moved} waiting message{'s' if moved != 1 else ''} followed)"
            app.call_from_thread(app.notify, f"@{old} is now @{new}." + (follow if moved else ""))
        except RoomError as exc:
            app.call_from_thread(app.notify, str(exc), severity="error")
        finally:
            room.close()
            app.post_message(RefreshWanted())

    def action_checkpoints(self) -> None:
        """The selected session's checkpoints, to resume one as a new agent."""
        row = self.sessions.selected
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        self._checkpoints(row.name, row.state)

    @work(thread=True, group="checkpoints", exit_on_error=False)
    def _checkpoints(self, name: str, state: str) -> None:
        """Read the checkpoints (a thread: SQLite blocks), then show them."""
        from agent_room.room.checkpoints import Checkpoints
        from agent_room.ui.screens.checkpoints import CheckpointsScreen

        app = cast("RoomConsole", self.app)
        room = app.open_room()
        try:
            listed = Checkpoints(room).listed(name)
        finally:
            room.close()
        new_name = name if state == "ended" else f"{name[:29]}-2"
        app.call_from_thread(
            app.push_screen, CheckpointsScreen(name, listed, new_name), self._resume
        )

    def _resume(self, chosen: Resume | None) -> None:
        if chosen is not None:
            self._run_resume(chosen)

    @work(thread=True, group="resume", exit_on_error=False)
    def _run_resume(self, chosen: Resume) -> None:
        """``agent-room resume`` as its own process: it starts the agent in tmux."""
        import subprocess
        import sys

        app = cast("RoomConsole", self.app)
        argv = [sys.executable, "-m", "agent_room", "resume", f"#{chosen.id}"]
        argv += ["--mode", chosen.mode, "--name", chosen.name, "--detach"]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        if done.returncode == 0:
            app.call_from_thread(app.notify, f"@{chosen.name} resumed from #{chosen.id}.")
        else:
            reason = done.stderr.strip().splitlines()[-1:] or ["it did not start"]
            app.call_from_thread(app.notify, reason[0], severity="error")

    def action_usage(self) -> None:
        """What the agents spent: a plot over time and a table (its own screen)."""
        from agent_room.ui.screens.usage import UsageScreen

        self.app.push_screen(UsageScreen(self._usage_view))

    def _usage_view(self, span: str, by: str) -> UsageView:
        """The usage screen's picture, read from the room (called in a thread)."""
        from agent_room.room.usage_report import usage_view

        room = cast("RoomConsole", self.app).open_room()
        try:
            return usage_view(room, span=span, by=by)
        finally:
            room.close()

    def action_entity_conflicts(self) -> None:
        """The entity conflicts waiting for a decision."""
        self._conflicts()

    @work(thread=True, group="conflicts", exit_on_error=False)
    def _conflicts(self, decided: Decision | None = None) -> None:
        """Settle a conflict (if one was decided), then list those left (a thread)."""
        from agent_room.core.errors import RoomError
        from agent_room.room.entities import Entities
        from agent_room.ui.screens.conflicts import ConflictsScreen

        app = cast("RoomConsole", self.app)
        room = app.open_room()
        try:
            entities = Entities(room)
            if decided is not None:
                entities.resolve(decided.id, take=decided.take)
            left = entities.conflicts()
        except RoomError as exc:
            app.call_from_thread(app.notify, str(exc), severity="error")
            return
        finally:
            room.close()
        if decided is None or left:
            app.call_from_thread(app.push_screen, ConflictsScreen(left), self._decided)

    def _decided(self, decided: Decision | None) -> None:
        if decided is not None:
            self._conflicts(decided)

    def on_handover_queue_highlighted(self, event: HandoverQueue.Highlighted) -> None:
        """Preview the highlighted handover."""
        self.query_one("#preview", HandoverPreview).handover = event.handover
