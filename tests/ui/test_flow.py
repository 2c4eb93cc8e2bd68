"""Pilot flow tests: each key of the console against a real seeded room.

The reader thread runs on the real SQLite room; the file watcher, the deliverer and the
liveness check are off, and tmux is a fake that records what it is asked to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets.data_table import RowKey
from textual.widgets.tree import TreeNode

from agent_room.core.enums import SessionState
from agent_room.plugin import claude_flags
from agent_room.room.service import Room
from agent_room.turn.room.registry import Registry
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.ui import app as app_module
from agent_room.ui.app import RoomConsole
from agent_room.ui.screens.help import HelpScreen
from agent_room.ui.screens.modals import ConfirmScreen, RejectScreen
from agent_room.ui.widgets.handovers import HandoverQueue
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.ui.widgets.tree import SessionTree
from tests.fakes import FakeMux
from tests.poll import wait_for
from tests.ui.conftest import SOCKET, run_from_palette, select_session, until
from tests.ui.seed import AliveProbe, FrozenClock

SIZE = (160, 48)
pytestmark = pytest.mark.anyio


def _state(home: Path, handover_id: int) -> tuple[str, str | None]:
    store = SqliteStore(home)
    try:
        row = store.handover(handover_id)
        assert row is not None
        return str(row["state"]), row["reason"]
    finally:
        store.close()


async def _highlighted(app: RoomConsole, pilot: Pilot[int]) -> int:
    """The id of the handover the queue highlights, once the queue has one."""
    queue = app.main.query_one("#queue", HandoverQueue)
    await until(pilot, lambda: queue.selected is not None)
    assert queue.selected is not None
    return queue.selected.id


def _names(app: RoomConsole) -> list[str]:
    return [row.name for row in app.main.query_one("#sessions", SessionsTable).shown]


async def test_a_approves_the_highlighted_handover(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 2)
        first = await _highlighted(app, pilot)
        await pilot.press("a")
        await until(pilot, lambda: _state(room_home, first)[0] == "approved")
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 1)
        assert "1 pending" in str(app.main.sub_title)


async def test_r_asks_a_reason_and_rejects(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        target = await _highlighted(app, pilot)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RejectScreen))
        await pilot.press("enter")  # no reason: the dialog stays
        assert isinstance(app.screen, RejectScreen)
        assert _state(room_home, target)[0] == "pending"
        await pilot.press(*"loops back to us")
        await pilot.press("enter")
        await until(pilot, lambda: _state(room_home, target)[0] == "rejected")
        assert _state(room_home, target)[1] == "loops back to us"
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 1)


async def test_escape_cancels_a_rejection(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await _highlighted(app, pilot)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, RejectScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, RejectScreen))
        assert _state(room_home, await _highlighted(app, pilot))[0] == "pending"


async def test_enter_switches_to_the_selected_live_session(
    console: Callable[..., RoomConsole], mux: FakeMux
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "frontend")
        await pilot.press("enter")
        await until(pilot, lambda: ("switch_client", SOCKET, "%2") in mux.calls)
        assert not [c for c in mux.calls if c[0] in {"open_window", "attach"}]


@pytest.mark.parametrize("named_in", ["the environment", "room.conf"])
async def test_enter_on_an_ended_session_resumes_it_after_a_confirm(
    console: Callable[..., RoomConsole],
    mux: FakeMux,
    monkeypatch: pytest.MonkeyPatch,
    room_home: Path,
    named_in: str,
) -> None:
    """The client's program is the room's setting, from a variable or the room's file."""
    if named_in == "room.conf":
        monkeypatch.delenv("AGENT_ROOM_CLAUDE", raising=False)
        conf = room_home / "room.conf"
        conf.touch(mode=0o600)
        with conf.open("a") as file:  # the PostgreSQL pass's names its database
            file.write("claude = /opt/claude/bin/claude\n")
    else:
        monkeypatch.setenv("AGENT_ROOM_CLAUDE", "/opt/claude/bin/claude")
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "docs")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert not mux.calls  # nothing starts before the answer
        await pilot.press("y")
        resume = ("/opt/claude/bin/claude", *claude_flags(), "--resume", "sess-docs")
        await until(pilot, lambda: ("switch_client", SOCKET, "%77") in mux.calls)
        (opened,) = [c for c in mux.calls if c[0] == "open_window"]
        assert opened[:3] == ("open_window", SOCKET, "/srv/shop/docs")
        assert opened[4:] == ("docs-resumed", True)
        argv = tuple(str(a) for a in opened[3])  # type: ignore[attr-defined]
        assert argv[argv.index(resume[0]) :] == resume


async def test_slash_filters_and_escape_clears(console: Callable[..., RoomConsole]) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(_names(app)) == 6)
        await pilot.press("slash", *"front")
        await until(pilot, lambda: _names(app) == ["frontend"])
        await pilot.press("enter")  # back to the table, the filter stays
        assert _names(app) == ["frontend"]
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"ended")
        await until(pilot, lambda: _names(app) == ["docs"])
        await pilot.press("escape")
        await until(pilot, lambda: len(_names(app)) == 6)


async def test_s_sorts_by_the_next_column_and_shift_s_reverses(
    console: Callable[..., RoomConsole],
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(_names(app)) == 6)
        assert _names(app) == ["backend", "frontend", "api", "reviewer", "docs", "ops"]
        app.main.query_one("#sessions", SessionsTable).focus()
        await pilot.press("s")
        await until(pilot, lambda: _names(app) == sorted(_names(app)))
        assert _names(app)[0] == "api"
        await pilot.press("S")
        await until(pilot, lambda: _names(app)[0] == "reviewer")
        await pilot.press("S", "s", "s")  # agent, then state: who needs a human first
        await until(pilot, lambda: _names(app)[:2] == ["api", "backend"])
        assert _names(app)[-1] == "docs"


async def test_selecting_a_tree_node_selects_the_session(
    console: Callable[..., RoomConsole],
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.main.query_one("#tree", SessionTree)
        table = app.main.query_one("#sessions", SessionsTable)
        await until(pilot, lambda: len(table.shown) == 6 and tree.last_line >= 5)
        line = next(
            i
            for i in range(tree.last_line + 1)
            if (n := tree.get_node_at_line(i)) and n.data == "reviewer"
        )
        tree.focus()
        tree.cursor_line = line
        await pilot.press("enter")
        await until(pilot, lambda: table.selected is not None and table.selected.name == "reviewer")


async def test_question_mark_opens_help(console: Callable[..., RoomConsole]) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_the_palette_offers_every_binding(console: Callable[..., RoomConsole]) -> None:
    from agent_room.ui.commands import ACTIONS

    offered = {action.split(".", 1)[1].split("(")[0] for _t, action, _k in ACTIONS}
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        bindings = [*app.BINDINGS, *app.main.BINDINGS]
        bound = {b.action for b in bindings if isinstance(b, Binding)}
        assert bound <= offered | {"command_palette"}, bound - offered


async def test_the_palette_runs_an_action(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        first = await _highlighted(app, pilot)
        await run_from_palette(pilot, "approve the highlighted")
        await until(pilot, lambda: _state(room_home, first)[0] == "approved")


async def test_the_watcher_shows_a_change_without_polling(
    console: Callable[..., RoomConsole], room_home: Path, seeded: tuple[Room, FrozenClock]
) -> None:
    """With an hour between safety re-reads, only the file watcher can bring the change."""
    room, _clock = seeded
    app = console(watch=True, safety_interval=3600.0)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.statuses.get("watcher") == "on")
        await until(pilot, lambda: app.snapshot is not None)
        room.join("newcomer", pane="%9")
        await until(pilot, lambda: "newcomer" in _names(app))


def _inotify_instances() -> int:
    """File watches this process holds (each watcher opens one inotify instance)."""
    fds = Path("/proc/self/fd")
    links = []
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):
            links.append(os.readlink(fd))
    return sum(link == "anon_inode:inotify" for link in links)


async def test_the_reader_and_the_workers_share_one_watch(
    console: Callable[..., RoomConsole], room_home: Path, seeded: tuple[Room, FrozenClock]
) -> None:
    """A watcher costs the same at rest whatever it serves: one for the whole console."""
    room, _clock = seeded
    before = _inotify_instances()
    app = console(watch=True, deliver=True, safety_interval=3600.0)
    async with app.run_test(size=SIZE) as pilot:
        workers = ("watcher", "deliverer", "injector")
        await until(pilot, lambda: all(app.statuses.get(w) in {"on", "active"} for w in workers))
        room.join("newcomer", pane="%9")
        await until(pilot, lambda: "newcomer" in _names(app))
        during = _inotify_instances()
    # a watch left by an earlier test in this process may close meanwhile, never open
    assert during <= before + 1
    # the console's one watch was among them (waited for off the loop, which goes on)
    await asyncio.to_thread(
        wait_for, lambda: _inotify_instances() < during, 5, what="the console's watch to close"
    )


class _BrokenProbe:
    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        raise OSError("the process table is unreadable")


async def test_a_failing_worker_is_reported_and_the_console_stays(
    console: Callable[..., RoomConsole],
) -> None:
    app = console(liveness=True)
    app.probe = _BrokenProbe()
    async with app.run_test(size=SIZE) as pilot:
        # the reader keeps going: the problem stays in the status bar while it lasts
        await until(pilot, lambda: app.statuses.get("reader", "").startswith("retrying:"))
        assert "the process table is unreadable" in app.statuses["reader"]
        assert any("unreadable" in n.message for n in app._notifications)
        assert app.is_running
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))


class _CountingProbe(AliveProbe):
    def __init__(self) -> None:
        self.calls = 0

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        self.calls += 1
        return super().is_alive(pid, start_ticks)


@pytest.mark.sqlite  # one machine: the room's injector checks every process on it
async def test_the_reader_leaves_the_processes_to_the_room_s_injector(
    console: Callable[..., RoomConsole], seeded: tuple[Room, FrozenClock]
) -> None:
    """The reader checks the agents' processes at its safety passes, unless the room's
    injector does: the console's own while active, or another process's, which the
    console's stands by for (``agent-room watch``, the background deliverer)."""
    _room, clock = seeded
    app = console(liveness=True, safety_interval=0.1)
    probe = app.probe = _CountingProbe()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: probe.calls > 0)  # no injector runs: the reader checks
        for status in ("standby", "active"):
            app.statuses = {**app.statuses, "injector": status}
            await pilot.pause(0.3)  # a check begun before it
            before = probe.calls
            clock.advance(3.0)  # the reader's liveness interval over
            await pilot.pause(1.5)  # its safety passes (every 0.1 s), a pause between pictures
            assert probe.calls == before, f"the reader checked with the injector {status}"
        app.statuses = {**app.statuses, "injector": "off"}
        clock.advance(3.0)
        await until(pilot, lambda: probe.calls > before)


async def test_garbage_collection_held_off_for_the_start_resumes_after_the_first_frame(
    console: Callable[..., RoomConsole],
) -> None:
    import gc

    app = console()
    gc.disable()  # as ``agent-room`` does before it builds the console
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, gc.isenabled)
            assert app.is_running
    finally:
        gc.enable()
        gc.unfreeze()


async def test_a_state_change_is_drawn_in_place_and_a_new_session_rebuilds(
    console: Callable[..., RoomConsole], seeded: tuple[Room, FrozenClock]
) -> None:
    room, _clock = seeded
    registry = Registry(room, AliveProbe())
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.main.query_one("#tree", SessionTree)
        await until(pilot, lambda: tree.last_line >= 5)

        def node(name: str) -> TreeNode[str]:
            return next(
                n
                for i in range(tree.last_line + 1)
                if (n := tree.get_node_at_line(i)) is not None and n.data == name
            )

        table = app.main.query_one("#sessions", SessionsTable)
        frontend = node("frontend")
        row = table.rows[RowKey("frontend")]
        assert "idle" in str(frontend.label)
        registry.set_state("sess-frontend", SessionState.BUSY)
        app.action_reread()
        await until(pilot, lambda: "busy" in str(node("frontend").label))
        assert node("frontend") is frontend  # the same node, relabelled
        await until(pilot, lambda: "busy" in str(table.get_cell("frontend", "state")))
        assert table.rows[RowKey("frontend")] is row  # the same row, its cells replaced
        room.join("newcomer", pane="%9")
        app.action_reread()
        await until(pilot, lambda: any(n.data == "newcomer" for n in tree.root.children))
        assert node("frontend") is not frontend  # a new shape: the nodes were rebuilt


def _shows(state: Callable[[], str], shown: str) -> bool:
    return shown in state()


async def test_a_room_that_changes_now_and_then_shows_each_change_at_once_a_busy_one_at_the_pace(
    console: Callable[..., RoomConsole],
    seeded: tuple[Room, FrozenClock],
) -> None:
    """A turn started or ended every half second (an agent's hooks) is on screen well
    within ``READ_GAP`` each time; while the room changes tens of times a second (agents
    talking), the changes are gathered into a picture every ``READ_GAP``: the console's
    cost follows its pace, not how fast the agents talk. Through the console's own watch
    of the room, as a user runs it."""
    room, _clock = seeded
    registry = Registry(room, AliveProbe())
    app = console(watch=True)
    pictures: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        table = app.main.query_one("#sessions", SessionsTable)

        def state() -> str:
            return str(table.get_cell("frontend", "state")) if "frontend" in table.rows else ""

        await until(pilot, lambda: "idle" in state() and app.statuses.get("watcher") == "on")
        slowest = 0.0
        for turn in range(6):
            await pilot.pause(0.5)
            started = time.monotonic()
            shown = "busy" if turn % 2 == 0 else "idle"
            registry.set_state(
                "sess-frontend", SessionState.BUSY if shown == "busy" else SessionState.IDLE
            )
            await until(pilot, partial(_shows, state, shown))
            slowest = max(slowest, time.monotonic() - started)
        assert slowest < app_module.READ_GAP / 2, f"a change took {slowest:.2f} s to show"
        app.watch(app, "snapshot", lambda _s: pictures.append(time.monotonic()), init=False)
        stream_start = time.monotonic()
        stream_end = stream_start + 2 * app_module.READ_GAP
        turn = 0
        while time.monotonic() < stream_end:  # two changes each 0.05 s: forty a second
            turn += 1
            # two changes, and each turn ends in the other state (idle before the first)
            end = SessionState.BUSY if turn % 2 else SessionState.IDLE
            registry.set_state("sess-frontend", SessionState.WAITING)
            registry.set_state("sess-frontend", end)
            await pilot.pause(0.05)
        in_stream = [at for at in pictures if stream_start <= at <= stream_end]
        assert turn >= 10  # twenty changes at least, however loaded the machine
        # a picture a gap; the first ones come before the stream counts as busy
        assert 1 <= len(in_stream) <= 6, f"{len(in_stream)} pictures in {turn} changes"


async def test_what_the_operator_asks_for_is_read_at_once_between_two_pictures(
    console: Callable[..., RoomConsole],
    seeded: tuple[Room, FrozenClock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While agents talk the reader paints at most a picture per ``READ_GAP``; the
    operator's own ask (an approval, a rename, ``ctrl+r``) ends that wait: here a wait
    longer than the test, which the picture asked for comes well before."""
    monkeypatch.setattr(app_module, "READ_GAP", 600.0)
    room, _clock = seeded
    registry = Registry(room, AliveProbe())
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        table = app.main.query_one("#sessions", SessionsTable)

        def state() -> str:
            return str(table.get_cell("frontend", "state")) if "frontend" in table.rows else ""

        await until(pilot, lambda: "idle" in state())
        registry.set_state("sess-frontend", SessionState.BUSY)
        app.action_reread()  # the reader is in its wait after the first picture
        await until(pilot, lambda: "busy" in state())
