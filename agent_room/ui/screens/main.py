"""``MainScreen``: the room at a glance — sessions, tree, flow, traffic and handovers.

Holds one ``snapshot`` reactive that the app replaces on every change; each widget is
data-bound to it and redraws its own part. Keys that act on a selection (filter, enter,
rename, checkpoints, conflicts) live here: entering is asked of the app with
``EnterRequested``; room work runs through the ``RoomWork`` the screen is given, and its
results come back as messages.
"""

from __future__ import annotations

import subprocess
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from rich.cells import cell_len
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input

from agent_room.core.snapshot import RoomSnapshot
from agent_room.room.entities import Entities
from agent_room.room.snapshot import TRAFFIC_WINDOW
from agent_room.ui.messages import EnterRequested, Notice, SessionChosen
from agent_room.ui.room_work import RoomWork
from agent_room.ui.screens.checkpoints import CheckpointsScreen, Resume
from agent_room.ui.screens.conflicts import ConflictsScreen, Decision
from agent_room.ui.screens.modals import RenameScreen
from agent_room.ui.widgets.flow import FlowTimeline
from agent_room.ui.widgets.handovers import HandoverPreview, HandoverQueue
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.ui.widgets.status import StatusBar
from agent_room.ui.widgets.traffic import TrafficMatrix
from agent_room.ui.widgets.tree import SessionTree

if TYPE_CHECKING:
    from agent_room.room.service import Room
    from agent_room.room.usage_report import UsageView


HEADER_SIDES = 8 + 10
"""Cells of the header beside its title: the icon's and the clock's space."""


def header_counts(snapshot: RoomSnapshot, room: int) -> str:
    """What waits for the operator and how many sessions live, in ``room`` cells if it can.

    Three forms of the same counts, the longest that fits: in words, in shorter words,
    and in the symbols ``agent-room status`` prints. No count is ever dropped.
    """
    live = sum(1 for s in snapshot.sessions if s.live)
    sessions = f"{live} live / {len(snapshot.sessions)} sessions"
    pending = snapshot.pending
    waits = [("⚑", pending, f"pending handover{_s(pending)}", f"handover{_s(pending)}")]
    for symbol, count, words, short in (
        ("⏸", snapshot.in_dialog, "in a dialog", f"dialog{_s(snapshot.in_dialog)}"),
        ("✗", snapshot.failed, "failed", "failed"),
        ("✉", snapshot.operator_unread, "for you", "for you"),
    ):
        if count:
            waits.append((symbol, count, words, short))
    forms = (
        " · ".join([f"{symbol} {count} {words}" for symbol, count, words, _ in waits] + [sessions]),
        " · ".join([f"{symbol} {count} {short}" for symbol, count, _, short in waits] + [sessions]),
        " ".join(f"{symbol}{count}" for symbol, count, _, _ in waits) + f" · {sessions}",
    )
    return next((form for form in forms if cell_len(form) <= room), forms[-1])


def _s(count: int) -> str:
    return "" if count == 1 else "s"


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
    statuses: var[tuple[tuple[str, str], ...]] = var(())
    """(worker, state) of each background worker; the app replaces it whole."""

    class CheckpointsRead(Message):
        """A session's checkpoints, read: offer them for a resume."""

        def __init__(self, name: str, listed: list[dict[str, Any]], new_name: str) -> None:
            self.name = name
            self.listed = listed
            self.new_name = new_name
            super().__init__()

    class ConflictsRead(Message):
        """The entity conflicts still waiting for a decision."""

        def __init__(self, conflicts: list[dict[str, Any]]) -> None:
            self.conflicts = conflicts
            super().__init__()

    def __init__(self, work: RoomWork, *, home: str, utc: bool = False) -> None:
        super().__init__()
        self.work = work
        """Blocking room work (rename, checkpoints, conflicts, usage), in threads."""
        self.home = home
        """The room's directory, for the status bar."""
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
        yield StatusBar(id="status").data_bind(MainScreen.statuses)
        yield Footer()

    def on_mount(self) -> None:
        """Titles of the panels that do not set their own."""
        traffic = self.query_one("#traffic", TrafficMatrix)
        traffic.border_title = f"Who talks to whom · last {TRAFFIC_WINDOW:,} messages"
        self.query_one("#filter", Input).display = False
        self.query_one("#sessions", SessionsTable).focus()
        self.query_one("#status", StatusBar).home = self.home

    @property
    def sessions(self) -> SessionsTable:
        """The sessions table."""
        return self.query_one("#sessions", SessionsTable)

    @property
    def queue(self) -> HandoverQueue:
        """The handover queue."""
        return self.query_one("#queue", HandoverQueue)

    def watch_snapshot(self) -> None:
        """The header counts what waits for the operator."""
        self._count_in_header()

    def on_resize(self) -> None:
        """The header's counts take the longest form the new width holds."""
        self._count_in_header()

    def _count_in_header(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            self.sub_title = "reading the room…"
            return
        room = self.size.width - HEADER_SIDES - cell_len(f"{self.app.title} — ")
        self.sub_title = header_counts(snapshot, room)

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
        self.post_message(EnterRequested(row.name))

    def action_rename_session(self) -> None:
        """Ask for a new name for the selected session, then rename it."""
        row = self.sessions.selected
        if row is None or row.outside:
            self.notify("No session of the room selected.", severity="warning")
            return
        old = row.name

        def chosen(new: str | None) -> None:
            if new:
                self.work.run(lambda room: _rename(room, old, new), group="rename", refresh=True)

        self.app.push_screen(RenameScreen(old), chosen)

    def action_checkpoints(self) -> None:
        """The selected session's checkpoints, to resume one as a new agent."""
        row = self.sessions.selected
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        name, state = row.name, row.state
        new_name = name if state == "ended" else f"{name[:29]}-2"
        self.work.run(partial(_checkpoints, name, new_name), group="checkpoints", to=self)

    def on_main_screen_checkpoints_read(self, message: CheckpointsRead) -> None:
        """Offer the checkpoints; a choice resumes one."""
        screen = CheckpointsScreen(message.name, message.listed, message.new_name)
        self.app.push_screen(screen, self._resume)

    def _resume(self, chosen: Resume | None) -> None:
        if chosen is not None:
            self._run_resume(chosen)

    @work(thread=True, group="resume", exit_on_error=False)
    def _run_resume(self, chosen: Resume) -> None:
        """``agent-room resume`` as its own process: it starts the agent in tmux."""
        argv = [sys.executable, "-m", "agent_room", "resume", f"#{chosen.id}"]
        argv += ["--mode", chosen.mode, "--name", chosen.name, "--detach"]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        if done.returncode == 0:
            self.post_message(Notice(f"@{chosen.name} resumed from #{chosen.id}."))
        else:
            reason = done.stderr.strip().splitlines()[-1:] or ["it did not start"]
            self.post_message(Notice(reason[0], severity="error"))

    def action_usage(self) -> None:
        """What the agents spent: a plot over time and a table (its own screen)."""
        # the plotting library costs the first paint a tenth: loaded when first asked for
        from agent_room.ui.screens.usage import UsageScreen

        self.app.push_screen(UsageScreen(self._usage_view))

    def _usage_view(self, span: str, by: str) -> UsageView:
        """The usage screen's picture, read from the room (called in a thread)."""
        return self.work.read(partial(_usage, span, by))

    def action_entity_conflicts(self) -> None:
        """The entity conflicts waiting for a decision."""
        self._conflicts(None)

    def _conflicts(self, decided: Decision | None) -> None:
        """Settle a conflict (if one was decided), then list those left (a thread)."""
        self.work.run(partial(_settle, decided), group="conflicts", to=self)

    def on_main_screen_conflicts_read(self, message: ConflictsRead) -> None:
        """Offer the conflicts left; a decision settles one."""
        self.app.push_screen(ConflictsScreen(message.conflicts), self._decided)

    def _decided(self, decided: Decision | None) -> None:
        if decided is not None:
            self._conflicts(decided)

    def on_handover_queue_highlighted(self, event: HandoverQueue.Highlighted) -> None:
        """Preview the highlighted handover."""
        self.query_one("#preview", HandoverPreview).handover = event.handover


def _rename(room: Room, old: str, new: str) -> Notice:
    renamed = room.rename(old, new)
    moved = int(renamed["moved"])
    follow = f" ({moved} waiting message{'s' if moved != 1 else ''} followed)"
    return Notice(f"@{old} is now @{new}." + (follow if moved else ""))


def _checkpoints(name: str, new_name: str, room: Room) -> MainScreen.CheckpointsRead:
    from agent_room.room.checkpoints import Checkpoints  # loaded beside the first paint

    return MainScreen.CheckpointsRead(name, Checkpoints(room).listed(name), new_name)


def _usage(span: str, by: str, room: Room) -> UsageView:
    from agent_room.room.usage_report import usage_view  # with the usage screen (above)

    return usage_view(room, span=span, by=by)


def _settle(decided: Decision | None, room: Room) -> MainScreen.ConflictsRead | None:
    """Settle the conflict decided, if any; the conflicts left (none: nothing to show
    after a decision)."""
    entities = Entities(room)
    if decided is not None:
        entities.resolve(decided.id, take=decided.take)
    left = entities.conflicts()
    if decided is None or left:
        return MainScreen.ConflictsRead(left)
    return None
