"""The operator in the console: the header and the sessions table say who waits for them,
``w`` writes to the selected agent as ``@operator``, ``i`` answers what agents wrote to
``@operator``, the notifier runs as a worker, ``--until-clear`` quits once nothing is
pending, and a console served to a browser does not enter agents."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input
from textual.widgets._header import HeaderTitle

from agent_room.room.service import Room
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.ui.app import RoomConsole
from agent_room.ui.screens.voice import OperatorInbox, WriteScreen
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.ui.widgets.status import StatusBar
from tests.fakes import FakeMux
from tests.ui.conftest import select_session, until

SIZE = (160, 48)
pytestmark = pytest.mark.anyio


def _messages(home: Path, recipient: str) -> list[tuple[str, str]]:
    room = Room(SqliteStore(home))
    try:
        rows = room.store.conn.execute(
            "SELECT sender, body FROM messages WHERE recipient = $1 AND kind = 'chat' ORDER BY id",
            (recipient,),
        ).fetchall()
        return [(str(s), str(b)) for s, b in rows]
    finally:
        room.close()


def _first_line(widget: Widget) -> str:
    """The first line Textual drew of ``widget``."""
    return widget.render_line(0).text.strip()


@asynccontextmanager
async def _waited_for(
    console: Callable[..., RoomConsole], room: Room
) -> AsyncIterator[tuple[RoomConsole, Pilot[int]]]:
    """The seeded console, once it shows the six sessions and a message for the operator."""
    room.send("reviewer", "operator", "May I merge?")
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        table = app.main.query_one("#sessions", SessionsTable)
        await until(pilot, lambda: len(table.shown) == 6)
        await until(pilot, lambda: "for you" in str(app.main.sub_title))
        yield app, pilot


async def test_the_header_and_the_table_show_who_waits_for_the_operator(
    console: Callable[..., RoomConsole], seeded: tuple[Room, object]
) -> None:
    room, _clock = seeded
    async with _waited_for(console, room) as (app, _pilot):
        table = app.main.query_one("#sessions", SessionsTable)
        title = str(app.main.sub_title)
        assert "⚑ 2 pending handovers" in title
        assert "⏸ 1 in a dialog" in title
        assert "✗ 1 failed" in title
        assert "✉ 1 for you" in title
        needs = {r.name: r.needs_operator for r in table.shown}
        assert needs["frontend"].startswith("handover #")
        assert needs["api"].startswith("handover #")
        assert needs["api"].endswith("permission dialog")
        assert needs["docs"] == "1 failed"
        assert needs["backend"] == needs["ops"] == needs["reviewer"] == ""
        cell = table.get_row_at(table.shown.index(next(r for r in table.shown if r.name == "api")))
        assert str(cell[0]).strip().startswith("⚑ @api")


async def test_w_writes_to_the_selected_agent_as_the_operator(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "backend")
        await pilot.press("w")
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        await pilot.press("enter")  # nothing written: nothing sent
        assert isinstance(app.screen, WriteScreen)
        app.screen.query_one("#text", Input).value = "Stop the migration until I say so"
        await pilot.press("enter")
        await until(pilot, lambda: ("operator", "Stop the migration until I say so") in _messages(
            room_home, "backend"
        ))  # fmt: skip
        await until(
            pilot, lambda: any("to @backend queued" in n.message for n in app._notifications)
        )


async def test_i_answers_a_message_written_to_the_operator(
    console: Callable[..., RoomConsole], seeded: tuple[Room, object], room_home: Path
) -> None:
    room, _clock = seeded
    room.send("reviewer", "operator", "May I merge the cursor change?")
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "✉ 1 for you" in str(app.main.sub_title))
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, OperatorInbox))
        await pilot.press("enter")  # the first (only) message: answer its sender
        await until(pilot, lambda: isinstance(app.screen, WriteScreen))
        screen = app.screen
        assert isinstance(screen, WriteScreen)
        assert screen.recipient == "reviewer"
        app.screen.query_one("#text", Input).value = "Yes, after the tests pass."
        await pilot.press("enter")
        await until(pilot, lambda: ("operator", "Yes, after the tests pass.") in _messages(
            room_home, "reviewer"
        ))  # fmt: skip
        await until(pilot, lambda: "for you" not in str(app.main.sub_title))  # read


async def test_until_clear_quits_once_the_last_handover_is_decided(
    console: Callable[..., RoomConsole],
) -> None:
    app = console(until_clear=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 2)
        app.main.queue.focus()
        await pilot.press("a")
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 1)
        assert app.is_running  # one still waits
        await pilot.press("a")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_a_console_in_a_browser_does_not_enter_agents(
    console: Callable[..., RoomConsole], mux: FakeMux
) -> None:
    app = console(served=True)
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "backend")
        await pilot.press("e")
        await until(pilot, lambda: any("needs a terminal" in n.message for n in app._notifications))
        assert mux.calls == []


async def test_the_notifier_runs_in_the_console_and_tells_a_command_hook(
    console: Callable[..., RoomConsole], tmp_path: Path
) -> None:
    out = tmp_path / "told.jsonl"
    hook = tmp_path / "hook.py"
    hook.write_text(f"import sys\nopen({str(out)!r}, 'a').write(sys.stdin.read())\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    notify = {"channels": ("command",), "command": (sys.executable, str(hook))}
    app = console(deliver=True, notify=notify)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.statuses.get("notifier") == "active", timeout=20)
        await until(pilot, lambda: out.exists() and len(out.read_text().splitlines()) >= 3)
    kinds = [json.loads(line)["kind"] for line in out.read_text().splitlines()]
    assert kinds.count("handover") == 2
    assert "failed" in kinds


async def test_a_handover_is_approved_with_every_worker_running_on_a_small_machine(
    console: Callable[..., RoomConsole], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The long-lived workers each hold a thread: on a one-core machine asyncio's own
    pool (five threads) had none left for the approval, and ``a`` did nothing."""
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    app = console(deliver=True, until_clear=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.statuses.get("memory") == "active", timeout=20)
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 2)
        app.main.queue.focus()
        await pilot.press("a")
        await until(pilot, lambda: app.snapshot is not None and app.snapshot.pending == 1)


async def test_a_narrow_header_keeps_the_count_of_sessions_in_shorter_words(
    console: Callable[..., RoomConsole], seeded: tuple[Room, object]
) -> None:
    room, _clock = seeded
    async with _waited_for(console, room) as (app, pilot):
        header = app.main.query_one(HeaderTitle)
        drawn = {}
        for width in (160, 110, 80):
            await pilot.resize_terminal(width, 40)
            await pilot.pause()
            drawn[width] = _first_line(header)
        assert drawn[160].endswith(
            "⚑ 2 pending handovers · ⏸ 1 in a dialog · ✗ 1 failed · ✉ 1 for you"
            " · 5 live / 6 sessions"
        )
        assert drawn[110].endswith(
            "⚑ 2 handovers · ⏸ 1 dialog · ✗ 1 failed · ✉ 1 for you · 5 live / 6 sessions"
        )
        assert drawn[80].endswith("⚑2 ⏸1 ✗1 ✉1 · 5 live / 6 sessions")
        assert all(line.startswith("agent-room — ") for line in drawn.values())


async def test_a_narrow_status_bar_names_every_worker(
    console: Callable[..., RoomConsole], seeded: tuple[Room, object]
) -> None:
    room, _clock = seeded
    async with _waited_for(console, room) as (app, pilot):
        status = app.main.query_one("#status", StatusBar)
        await until(pilot, lambda: len(app.main.statuses) >= 4)
        workers = [worker for worker, _state in app.main.statuses]
        await pilot.resize_terminal(240, 40)
        await pilot.pause()
        wide = _first_line(status)
        assert all(f"{worker} {state}" in wide for worker, state in app.main.statuses)
        assert wide.endswith(f"room {status.home}")
        await pilot.resize_terminal(80, 40)
        await pilot.pause()
        narrow = _first_line(status)
        assert all(f"● {worker}" in narrow for worker in workers), narrow
        assert "room …" in narrow
        assert narrow.endswith(status.home[-4:])
