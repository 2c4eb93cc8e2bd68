"""``RoomConsole``: the full-screen console, and ``make_app``, its one constructor.

The app owns the background workers and the objects that act for the operator:
``RoomWork`` (blocking room work in thread workers), ``Entering`` (entering a session)
and ``OperatorVoice`` (decisions, writing as ``@operator``). Screens post messages up
(``EnterRequested``) and the app sets attributes down (the main screen's ``snapshot``
and ``statuses``). A reader thread builds one frozen ``RoomSnapshot`` per change and
posts it; the room's file watch wakes the reader on room changes; the delivery worker
runs in its own thread. Workers never touch the app or a widget: they post messages,
and a worker that fails is reported and restarted, never fatal.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from agent_room.adapters.git import GitCli
from agent_room.adapters.processes import SystemProbe
from agent_room.config.notify import NotifySettings
from agent_room.core.overlaps import CodeSnapshot
from agent_room.core.ports import Clock, Multiplexer
from agent_room.core.snapshot import RoomSnapshot, with_code
from agent_room.room.enter import Where
from agent_room.room.native import native_registry
from agent_room.room.service import Room, connect_long_lived
from agent_room.room.snapshot import SnapshotReader
from agent_room.room.worktrees import Worktrees
from agent_room.turn.core.errors import RoomError
from agent_room.turn.core.names import tmux_socket_of
from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.core.printable import printable
from agent_room.turn.room.registry import Registry
from agent_room.turn.store.attention import room_exists
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.ui.code import CodeReading
from agent_room.ui.commands import RoomCommands
from agent_room.ui.enter import Entering
from agent_room.ui.messages import (
    RETRYING,
    CodeReady,
    EnterPlanned,
    EnterRequested,
    InboxRead,
    Notice,
    RefreshWanted,
    SnapshotReady,
    WorkerStatus,
)
from agent_room.ui.reach import OperatorVoice
from agent_room.ui.reading import Reading
from agent_room.ui.room_work import RoomWork
from agent_room.ui.screens.changes import ChangesScreen
from agent_room.ui.screens.main import MainScreen
from agent_room.ui.settings import DEFAULT_THEME, ConsoleSettings, remember_theme
from agent_room.ui.themes import VARIABLE_DEFAULTS, register_themes
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.workers.background import start_deliverer
from agent_room.workers.guard import Guard

if TYPE_CHECKING:  # the workers load after the first paint (see ``_supervise``)
    from agent_room.workers.notifier import Notifier
    from agent_room.workers.supervisor import Report, Supervisor
    from agent_room.workers.wakeup import RoomWatch


AGE_REFRESH = 30.0
"""Seconds after which an unchanged room is posted again, so the ages move on."""
READ_GAP = 2.0
"""Seconds the reader waits after posting a changed room before it reads again, while the
room changes fast (``reading.Pace``: agents talking log several events a message, a
send, its delivery, the turns it starts and ends): each picture costs the console a
read and a redraw, and the changes of two seconds are gathered into one, so the
console's cost follows this pace, not how fast the agents talk (a monitor's pace:
``top`` redraws every three seconds). A room that changes now and then shows each change
at once, and so does what the operator just did (``action_reread`` ends the wait); keys
are never paced."""
BACKGROUND_WAIT = 15.0
"""How long the console waits for the background deliverer it started to take the lease
before its own workers start beside it (in a thread: the console draws meanwhile). They
stand by while it holds the lease, so delivery goes on when the console quits; a
machine busy enough to start it slower than the three seconds ``start`` and ``join``
wait would otherwise find the console's own deliverer holding the lease first."""
SETTLE = 0.25
"""Seconds the reader waits after any picture: a hook and what the workers write in
reply come as a few changes within a tenth of a second, and make one picture."""
WORKERS = ("reader", "watcher", "deliverer", "injector", "memory", "notifier")
WORKER_THREADS = 16
"""Threads for the console's thread workers. The reader and the code reader each hold a
thread for the console's whole life (the leased workers run in threads of their own);
asyncio's default pool (CPU count + 4: six on a two-core machine) would leave none for
an approval, a diff or a jump, which would then wait for ever."""


def _room_files(path: str) -> bool:
    """Only the database and its write-ahead log wake the reader."""
    return Path(path).name in {"room.db", "room.db-wal"}


class RoomConsole(App[int]):
    """The agent-room console."""

    CSS_PATH = "app.tcss"
    TITLE = "agent-room"
    COMMANDS = App.COMMANDS | {RoomCommands}
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve"),
        Binding("r", "reject", "Reject"),
        Binding("w", "write", "Write", show=False),
        Binding("i", "operator_inbox", "For you", show=False),
        Binding("d", "changes", "Changes", show=False),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    snapshot: var[RoomSnapshot | None] = var(None, init=False)
    """The room as last read; replaced whole, never changed in place."""
    statuses: var[dict[str, str]] = var(dict, init=False)
    """Each background worker's state, for the status bar."""
    code: var[CodeSnapshot | None] = var(None, init=False)
    """Every agent's branch and changes, read by the code worker when turns end."""

    def __init__(
        self,
        settings: ConsoleSettings,
        *,
        mux: Multiplexer | None,
        probe: ProcessProbe,
        where: Where,
        clock: Clock = time.time,
        snapshot: RoomSnapshot | None = None,
        code: CodeSnapshot | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        """How the console runs."""
        self._mux = mux
        self.probe = probe
        """The process probe, for liveness."""
        self.where = where
        """Where the console runs: its tmux server and pane."""
        self.clock = clock
        """Now, for the room service (frozen in tests)."""
        self.user_themes: set[str] = set()
        """Names of the themes read from the user's folders."""
        self._first = snapshot
        self._first_code = code
        self._raw: RoomSnapshot | None = snapshot
        """The reader's last snapshot, before the code worker's findings are merged in."""
        self._code = CodeReading()
        self._wake = threading.Event()
        self._asked = threading.Event()
        """Read the room at the reader's next pass even if its change count stands still."""
        self._hurry = threading.Event()
        """The reader's wait between pictures ends now (the operator asked, or stopping)."""
        self._pausing = threading.Event()
        """Set while the reader pauses between two pictures."""
        self._heard: int | None = None
        """Wake-ups the console's watch heard while it listens (``_room_changed``): on
        PostgreSQL, the reader's count of the room's changes."""
        self._injector = "off"
        """The console's injector's status (set on the main thread, read by the reader):
        ``active``, or ``standby`` while another process's is active."""
        self._stop = threading.Event()
        self._watch_stop: asyncio.Event | None = None
        self._supervisor: Supervisor | None = None
        self._shared_watch: RoomWatch | None = None
        self._background_started = False
        self._room_opened = False
        """Whether a connection to the room was opened: after that, never made anew."""
        self.work = RoomWork(self, self.open_room)
        """Blocking room work in thread workers, for the app and its screens."""
        self.entering = Entering(
            self, self.work, mux=mux, probe=probe, where=where, served=settings.served
        )
        """Entering a session: plan, confirm, switch or attach."""
        self.voice = OperatorVoice(self, self.work)
        """Deciding handovers, writing to agents as ``@operator``, reading their answers."""
        self._theme_problems = self._register_themes()

    @property
    def mux(self) -> Multiplexer:
        """The multiplexer port (tmux), for entering sessions and for delivery."""
        assert self._mux is not None
        return self._mux

    # -- set-up -----------------------------------------------------------------------

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """The console's own variables, for themes that do not set them."""
        return dict(VARIABLE_DEFAULTS)

    def _register_themes(self) -> list[str]:
        """Register the shipped and user themes and pick one, before the first styling
        (a theme set after mount restyles every widget again); return the problems."""
        users, problems = register_themes(self, self.settings.theme_dirs)
        self.user_themes.update(users)
        wanted = self.settings.theme
        if wanted not in self.available_themes:
            problems.append(f"no theme named {wanted!r}")
            wanted = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = wanted
        return problems

    def on_mount(self) -> None:
        """Report theme problems, show the first snapshot, start the reader."""
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="agent-room")
        )
        for problem in self._theme_problems:
            self.notify(problem, title="Theme not loaded", severity="warning", timeout=10)
        self.watch(self, "theme", self._remember_theme, init=False)
        self.statuses = dict.fromkeys(WORKERS, "off")
        if self._first_code is not None:
            self.code = self._first_code
        if self._first is not None:
            self.snapshot = self._with_code(self._first)
        self.start_workers()
        self.call_after_refresh(self._collect_garbage_again)

    def _collect_garbage_again(self) -> None:
        """Garbage collection back on after the first frame, if the command line held it
        off for the start; what the start built stays for good, so it is frozen out of
        the collector's passes."""
        if not gc.isenabled():
            gc.freeze()
            gc.enable()

    def get_default_screen(self) -> MainScreen:
        """The room view is the console's base screen."""
        return MainScreen(self.work, home=self.settings.home, utc=self.settings.utc)

    def start_workers(self) -> None:
        """Start the workers once the first picture is on screen (they would only compete
        with the first paint); with no picture yet, the reader now and the others once it
        has posted one, or after a second."""
        self._stop.clear()
        self._background_started = False
        if self.snapshot is not None or not self.settings.live:
            self.call_after_refresh(self._start_background)
            return
        self._read_room()
        self.set_timer(1.0, self._start_background)

    def _start_background(self) -> None:
        if self._background_started or self._stop.is_set():
            return
        self._background_started = True
        self._room_watch()  # made here, before the threads that share it ask for it
        reading = any(w.name == "reader" and not w.is_finished for w in self.workers)
        if self.settings.live and not reading:
            self._read_room()
        if self.settings.live and self.settings.watch:
            self._watch_room()
        if self.settings.live and self.settings.code:
            self._code.wake.set()
            self._read_code()
        if self.settings.deliver and self.settings.background:
            self._deliver_in_background()
        elif self.settings.deliver:
            self._supervise()

    @work(thread=True, exclusive=True, group="background", exit_on_error=False)
    def _deliver_in_background(self) -> None:
        """Start the room's background deliverer unless one listens (or the room's
        ``watch`` setting is off), then the console's workers, which stand by beside it:
        delivery goes on when the console quits, and the console's own threads draw."""
        # loaded after the first paint: the room's settings bring pydantic-settings
        from agent_room.config.settings import RoomSettings

        problem = None
        try:
            if RoomSettings.load(os.environ).watch and room_exists(self.settings.home):
                started = start_deliverer(os.environ, wait=BACKGROUND_WAIT)
                problem = None if started is None else started.problem
        except (RoomError, OSError) as exc:  # the console's own workers deliver, and say why
            problem = f"no background deliverer: {exc}"
        if problem is not None:
            self.post_message(Notice(problem, title="Delivery", severity="warning", timeout=10))
        self.call_from_thread(self._supervise_unless_stopped)

    def _supervise_unless_stopped(self) -> None:
        if not self._stop.is_set():
            self._supervise()

    def stop_workers(self) -> None:
        """Tell every worker to finish (they check between passes)."""
        self._stop.set()
        self._wake.set()
        self._hurry.set()
        self._code.stop()
        if self._watch_stop is not None:
            self._watch_stop.set()
        if self._supervisor is not None:
            self._supervisor.stop()
        if self._shared_watch is not None:
            self._shared_watch.close()
        self.workers.cancel_all()

    def on_unmount(self) -> None:
        """Leave no thread behind."""
        self.stop_workers()

    # -- the snapshot -----------------------------------------------------------------

    def watch_snapshot(self, snapshot: RoomSnapshot | None) -> None:
        """Hand the new picture to the main screen."""
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.snapshot = snapshot
        if self.settings.until_clear and self.voice.cleared(snapshot):
            self.exit(0)

    def watch_statuses(self, statuses: dict[str, str]) -> None:
        """Show the workers' states; tell the reader whether the injector is active or
        stands by."""
        self._injector = statuses.get("injector", "off")
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.statuses = tuple(statuses.items())

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        """The reader's newest picture; the code worker is woken when a turn ended."""
        self._raw = message.snapshot
        self.snapshot = self._with_code(message.snapshot)
        self._code.moved(message.snapshot)
        if not self._background_started:
            self.call_after_refresh(self._start_background)

    def _with_code(self, snapshot: RoomSnapshot) -> RoomSnapshot:
        """The reader's picture with each agent's branch, overlaps and previews."""
        code = self.code
        if code is None:
            return snapshot
        return with_code(snapshot, code.branches(), code.clashes(), code.preview_texts())

    def on_code_ready(self, message: CodeReady) -> None:
        """The code worker's newest reading: into the sessions, handovers and changes."""
        self.code = message.code
        if self._raw is not None:
            self.snapshot = self._with_code(self._raw)
        for screen in self.screen_stack:
            if isinstance(screen, ChangesScreen):
                screen.code = message.code

    def action_changes(self) -> None:
        """What each agent changed, and a file's diff."""
        self.push_screen(ChangesScreen(self.code))

    def on_changes_screen_diff_wanted(self, message: ChangesScreen.DiffWanted) -> None:
        """Read a file's patch in a thread, for the changes screen that asked (not in a
        console that shows only the snapshot it was given: it reads no room)."""
        if not self.settings.live:
            return
        for screen in self.screen_stack:
            if isinstance(screen, ChangesScreen):
                self._read_diff(screen, message.name, message.path)

    @work(thread=True, exclusive=True, group="diff", exit_on_error=False)
    def _read_diff(self, screen: ChangesScreen, name: str, path: str) -> None:
        """One file's patch, with git, posted to the changes screen (a room that cannot
        be opened ends the worker quietly: the pane keeps its hint)."""
        screen.post_message(self.work.read(partial(_file_diff, name, path)))

    @work(thread=True, exclusive=True, group="code", exit_on_error=False, name="code")
    def _read_code(self) -> None:
        """Read every agent's branch and changes with git when a turn ends (``ui.code``):
        git blocks, so never on the event loop, and never on a timer."""
        worker = get_current_worker()
        self.work.read(
            partial(
                self._code.run,
                stopped=lambda: worker.is_cancelled or self._stop.is_set(),
                post=lambda code: self.post_message(CodeReady(code)),
                report=lambda problem: self.post_message(
                    Notice(problem, title="Code", severity="error")
                ),
            )
        )

    def on_worker_status(self, message: WorkerStatus) -> None:
        """A worker reports its state; a new problem is also notified once."""
        if message.status.startswith(RETRYING) and message.status != self.statuses.get(
            message.worker
        ):
            problem = message.status.removeprefix(RETRYING).strip()
            self.notify(f"{message.worker}: {problem}", title="Retrying", severity="error")
        self.statuses = {**self.statuses, message.worker: message.status}

    def on_refresh_wanted(self, _message: RefreshWanted) -> None:
        """Read the room again now."""
        self.action_reread()

    def on_notice(self, message: Notice) -> None:
        """A worker's toast."""
        self.notify(
            message.text, title=message.title, severity=message.severity, timeout=message.timeout
        )

    def on_enter_requested(self, message: EnterRequested) -> None:
        """A screen asks to enter a session."""
        self.entering.start(message.name)

    def on_enter_planned(self, message: EnterPlanned) -> None:
        """The plan is ready: refuse, confirm a resume, switch, or attach."""
        self.entering.planned(message.plan)

    def on_inbox_read(self, message: InboxRead) -> None:
        """The operator's messages are read: show them."""
        self.voice.show_inbox(message.found)

    def open_room(self) -> Room:
        """A fresh connection to the room, for one worker thread (psycopg's, for a room
        on PostgreSQL: the console keeps it open). The first makes the room if it is not
        there; once one was opened, a room removed under the console is ``RoomGone`` to
        its workers, not made again empty."""
        store = SqliteStore(
            self.settings.home, open_postgres=connect_long_lived, create=not self._room_opened
        )
        self._room_opened = True
        return Room(store, clock=self.clock)

    # -- workers ----------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="reader", exit_on_error=False, name="reader")
    def _read_room(self) -> None:
        """Read the room on a wake-up or every ``safety_interval`` (when something shown
        may have changed: ``Reading``); post changes."""
        worker = get_current_worker()
        self.work.read(partial(self._keep_reading, worker))

    def _keep_reading(self, worker: Worker[None], room: Room) -> None:
        """The reader's loop, on its own connection (``_read_room``)."""
        registry = Registry(room, self.probe) if self.settings.liveness else None
        native = native_registry(os.environ) if self.settings.liveness else None
        reader = SnapshotReader(
            room, registry=registry, flow_limit=self.settings.flow_limit, native=native
        )
        self.post_message(WorkerStatus("reader", "on"))
        # a room locked for long, a full disk: say so in the status bar, keep reading
        guard = Guard("reader", room.store, self._problems("reader", "on"))
        last: RoomSnapshot | None = self._first  # the picture already on screen
        reading = Reading(reader, heard=lambda: self._heard)  # most wake-ups change nothing
        one_host = room.store.engine == "sqlite"
        safety = self.settings.safety_interval
        due = time.monotonic()
        while not (worker.is_cancelled or self._stop.is_set()):
            self._wake.clear()
            asked = self._asked.is_set()
            if asked:
                self._asked.clear()
            # the room's injector checks the same processes as often, and what it finds
            # moves the room's change count: the console's own while active, or the one
            # it stands by for (on one machine: on PostgreSQL that may be another host's)
            injector = self._injector
            checked = injector == "active" or (one_host and injector == "standby")
            reader.registry = None if checked else registry
            timed = time.monotonic() >= due
            if timed:
                due = time.monotonic() + safety
            snapshot = guard.run(partial(reading.read, timed=timed, asked=asked))
            if snapshot is not None:
                stale = last is not None and snapshot.taken_at - last.taken_at >= AGE_REFRESH
                if not snapshot.same_content(last) or stale:
                    self.post_message(SnapshotReady(snapshot))
                    last = snapshot
                    self._pause(READ_GAP if reading.pace.busy() else SETTLE)
            self._wake.wait(guard.pause(max(0.0, due - time.monotonic())))

    def _pause(self, gap: float) -> None:
        """Between two pictures: ``gap`` seconds, unless the operator asks first. The
        room's changes meanwhile are read at its end: the console's watch may rest."""
        self._hurry.clear()
        self._pausing.set()
        try:
            if not (self._asked.is_set() or self._stop.is_set()):
                self._hurry.wait(gap)
        finally:
            self._pausing.clear()
            if self._shared_watch is not None:
                self._shared_watch.hurry()  # the next change is to be read at once

    def _room_changed(self) -> None:
        """The console's watch heard the room change (on PostgreSQL: one a notification,
        the reader's change count there); the reader reads."""
        self._heard = (self._heard or 0) + 1
        self._wake.set()

    def _reading_soon(self) -> bool:
        """Whether the reader needs the room's next change at once: unless it is
        pausing between two pictures (``_pause``)."""
        return not self._pausing.is_set()

    def _problems(self, name: str, recovered: str | None) -> Callable[[str | None], None]:
        """What a worker's guard reports: the problem in the status bar (and once as a
        notification), and ``recovered`` there once a pass works again (None: the
        worker's next pass tells)."""

        def report(problem: str | None) -> None:
            if problem is not None:
                self.post_message(WorkerStatus(name, f"{RETRYING} {problem}"))
            elif recovered is not None:
                self.post_message(WorkerStatus(name, recovered))

        return report

    @work(exclusive=True, group="watcher", exit_on_error=False, name="watcher")
    async def _watch_room(self) -> None:
        """Wake the reader when the room's database changes (through the console's watch)."""
        from agent_room.workers.wakeup import never  # loaded by ``_room_watch`` by now

        self._watch_stop = stop = asyncio.Event()
        watch = self._room_watch()
        self.post_message(WorkerStatus("watcher", "on"))
        # between two pictures the reader reads again at the end of its pause: it needs
        # no change at once then (``RoomWatch.hurry`` when the pause ends)
        watch.subscribe(self._room_changed, want=_room_files, prompt=self._reading_soon)
        if self._heard is None:  # listening now: the reader's next pass reads (None to 0)
            self._heard = 0
        # a turn's end writes the room; the code is read again within a rest or two
        watch.subscribe(self._code.wake.set, want=_room_files, prompt=never)
        try:
            await stop.wait()
        finally:
            watch.unsubscribe(self._room_changed)
            watch.unsubscribe(self._code.wake.set)
            self._heard = None  # not listening: the reader reads at every pass again
        self.post_message(WorkerStatus("watcher", "off"))

    def _room_watch(self) -> RoomWatch:
        """The console's one watch of the room, for the reader and the workers alike (a
        watcher costs the same at rest whatever it serves)."""
        if self._shared_watch is None or self._shared_watch.stop.is_set():
            # loaded after the first paint, with the workers (watchfiles)
            from agent_room.workers.wakeup import RoomWatch

            self._shared_watch = RoomWatch(
                self.settings.home,
                debounce=self.settings.debounce,
                step=self.settings.step,
                stop=threading.Event(),
            )
        return self._shared_watch

    def _supervise(self) -> None:
        """The room's leased workers (deliverer, injector, memory, notifier), each in its
        own thread under ``workers.supervisor``, woken by the console's watch of the room;
        their news goes to the status bar."""
        # loaded after the first paint: the workers bring the price tables (70 ms)
        from agent_room.workers.supervisor import Job, Supervisor, room_jobs

        jobs = room_jobs(self.mux, self.probe, self._room_watch(), os.environ)
        if self.settings.notify.enabled:
            jobs.append(Job("notifier", self._make_notifier))
        self._supervisor = Supervisor(
            self.open_room, self._leased_report, restart_delay=self.settings.restart_delay
        )
        self._supervisor.start(jobs)

    def _leased_report(self, report: Report) -> None:
        """A leased worker's news, from its thread, as the status bar says it."""
        from agent_room.workers.supervisor import State  # loaded by _supervise by now

        match report.state:
            case State.ACTIVE | State.STANDBY | State.OFF:
                self.post_message(WorkerStatus(report.worker, report.state.value))
            case State.RETRYING:
                self.post_message(WorkerStatus(report.worker, f"{RETRYING} {report.detail}"))
            case State.FAILED:
                self.post_message(WorkerStatus(report.worker, "error"))
                self.post_message(
                    Notice(
                        f"{report.worker} stopped: {report.detail}",
                        title="Worker error",
                        severity="error",
                    )
                )
            case State.RECOVERED:
                pass  # its next pass says active or standby

    def _make_notifier(self, room: Room) -> Notifier:
        """The notifier on ``room`` (run by the supervisor); its channel problems become
        toasts (posted: this runs in the notifier's thread)."""
        # loaded after the first paint, with the workers (see ``_supervise``)
        from agent_room.workers.notifier import Notifier, build_channels

        channels, problems = build_channels(self.settings.notify, room, self.where.socket)
        if self.settings.notify.channels == NotifySettings().channels:
            problems = []  # the defaults: no desktop here is no news (agent-room notify says)
        for problem in problems:
            self.post_message(
                Notice(problem, title="Notifications", severity="warning", timeout=10)
            )

        def on_problem(channel: str, problem: str | None) -> None:
            if problem is not None:
                self.post_message(
                    Notice(f"{channel}: {problem}", title="Notification failed", severity="error")
                )

        return Notifier(
            room,
            self.probe,
            channels,
            policy=self.settings.notify.policy(),
            on_problem=on_problem,
            git=GitCli() if self.settings.code else None,
            room_watch=self._room_watch(),
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that fails is reported and started again; the console stays up."""
        worker = event.worker
        restart = {"reader": self._read_room, "watcher": self._watch_room}
        if event.state is not WorkerState.ERROR or worker.name not in restart:
            return
        self.statuses = {**self.statuses, worker.name: "error"}
        self.notify(
            f"{worker.name} stopped: {worker.error}", title="Worker error", severity="error"
        )
        if self.settings.restart_delay > 0 and not self._stop.is_set():
            self.set_timer(self.settings.restart_delay, restart[worker.name])

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast, from any widget, shows its text escaped and never parsed as markup:
        errors and reasons quote what agents and panes wrote (``core.printable``)."""
        del markup
        super().notify(
            printable(message, multiline=True),
            title=printable(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    # -- actions ----------------------------------------------------------------------

    @property
    def main(self) -> MainScreen:
        """The main screen."""
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise LookupError("the main screen is not mounted")

    def action_approve(self) -> None:
        """Approve the highlighted handover."""
        self.voice.approve(self.main.queue.selected)

    def action_reject(self) -> None:
        """Ask why, then reject the highlighted handover."""
        self.voice.reject(self.main.queue.selected)

    def action_write(self) -> None:
        """Write to the selected agent as ``@operator``."""
        row = self.main.sessions.selected
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        self.voice.write(row.name)

    def action_operator_inbox(self) -> None:
        """The messages agents wrote to ``@operator``; choosing one answers it."""
        self.voice.read_inbox()

    def action_help(self) -> None:
        """The keys and what they do."""
        from agent_room.ui.screens.help import HelpScreen  # 28 ms, when asked for

        self.push_screen(HelpScreen())

    def action_focus_panel(self, panel: str) -> None:
        """Focus one of the panels by id."""
        self.main.query_one(f"#{panel}").focus()

    def action_sort_by(self, key: str) -> None:
        """Sort the sessions by a column."""
        self.main.query_one("#sessions", SessionsTable).sort_key = key

    def action_reverse_sort(self) -> None:
        """Flip the sessions' order."""
        table = self.main.query_one("#sessions", SessionsTable)
        table.reverse = not table.reverse

    def _remember_theme(self, name: str) -> None:
        """The theme chosen now is the one the next start opens with."""
        remember_theme(self.settings.theme_memory, name)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands, less its theme picker: the palette's own ``Theme: NAME``
        entries offer the console's themes (the shipped three and the user's)."""
        for command in super().get_system_commands(screen):
            if command.title != "Theme":
                yield command

    @property
    def offered_themes(self) -> list[str]:
        """The shipped themes and the user's, for the command palette."""
        return [
            name
            for name in sorted(self.available_themes)
            if name.startswith("agent-room") or name in self.user_themes
        ]

    def action_use_theme(self, name: str) -> None:
        """Switch theme."""
        self.theme = name

    def action_reread(self) -> None:
        """Read the room again now."""
        self._asked.set()
        self._wake.set()
        self._hurry.set()

    def action_restart_workers(self) -> None:
        """Stop and start the background workers."""
        self.stop_workers()
        self.start_workers()


def make_app(
    settings: ConsoleSettings,
    *,
    mux: Multiplexer | None = None,
    probe: ProcessProbe | None = None,
    where: Where | None = None,
    clock: Clock | None = None,
    snapshot: RoomSnapshot | None = None,
    code: CodeSnapshot | None = None,
) -> RoomConsole:
    """The console, with real tmux and process adapters unless others are given.

    The command line and the tests both build the app here, so they run the same thing.
    """
    if mux is None:
        # libtmux reads sys.stdout.encoding when imported: load it before the app
        # captures stdout (the command line loads it beside the first read)
        from agent_room.adapters.tmux import Tmux

        mux = Tmux()
    if probe is None:
        probe = SystemProbe()
    if where is None:
        socket = tmux_socket_of(os.environ.get("TMUX"))
        outside = socket is None and sys.stdin.isatty()
        where = Where(
            socket=socket,
            pane=os.environ.get("TMUX_PANE") or None,
            session_id=None,
            actor="operator",
            tty=os.ttyname(sys.stdin.fileno()) if outside else None,  # exit-agent detaches
        )
    extra: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return RoomConsole(
        settings, mux=mux, probe=probe, where=where, snapshot=snapshot, code=code, **extra
    )


def _file_diff(name: str, path: str, room: Room) -> ChangesScreen.DiffReady:
    """One file's patch, with git (or why there is none), for the changes screen."""
    try:
        patch = Worktrees(room, GitCli()).file_diff(name, path)
    except RoomError as exc:
        patch = str(exc)
    return ChangesScreen.DiffReady(name, path, patch)
