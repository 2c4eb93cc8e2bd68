"""The console's own workers under a database fault: the status bar says what is wrong,
and the workers go back to work by themselves once it passes."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent_room.room.enter import Where
from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomGone
from agent_room.ui.app import make_app
from agent_room.ui.widgets.status import StatusBar
from agent_room.workers.deliverer import Deliverer
from tests.fakes import FakeMux
from tests.faults import tiny_disk
from tests.ui.conftest import live_settings, until
from tests.ui.seed import AliveProbe

pytestmark = pytest.mark.anyio


async def test_a_full_disk_is_shown_and_the_workers_recover(tmp_path: Path) -> None:
    with tiny_disk(tmp_path) as disk:
        home = disk.where / "room"
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        room.join("backend")
        app = make_app(
            live_settings(home, deliver=True, safety_interval=0.2),
            mux=FakeMux(),
            probe=AliveProbe(),
            where=Where(socket=None, pane=None, session_id=None, actor="operator"),
            clock=time.time,
        )
        try:
            async with app.run_test(size=(160, 40)) as pilot:
                workers = ("deliverer", "injector")
                await until(pilot, lambda: all(app.statuses.get(w) == "active" for w in workers))
                disk.fill()
                await until(
                    pilot,
                    lambda: all("full" in app.statuses.get(w, "") for w in workers),
                    timeout=20,
                )
                assert app.statuses["deliverer"].startswith("retrying:")
                bar = app.main.query_one(StatusBar)
                assert "database or disk is full" in str(bar.render())
                assert any("full" in n.message for n in app._notifications)
                assert app.is_running
                disk.free()
                await until(
                    pilot,
                    lambda: all(app.statuses.get(w) == "active" for w in workers),
                    timeout=40,
                )
        finally:
            room.close()


async def test_a_worker_ended_by_an_unforeseen_fault_is_shown_and_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault no guard foresaw ends the deliverer's run: the status bar says ``error``, a
    toast says why, and the console's supervisor starts it again after ``restart_delay``."""
    run = Deliverer.run
    runs: list[int] = []
    seen = threading.Event()

    def first_run_breaks(self: Deliverer, stop: threading.Event, **reports: Any) -> None:
        runs.append(1)
        if len(runs) == 1:
            raise ValueError("a bug in the deliverer")
        # the run started again says "active" at its first pass: held back until the
        # test has read the error (a loaded machine can take longer than the delay)
        while not seen.wait(0.05) and not stop.is_set():
            pass
        run(self, stop, **reports)

    monkeypatch.setattr(Deliverer, "run", first_run_breaks)
    home = tmp_path / "room"
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    app = make_app(
        live_settings(home, deliver=True, restart_delay=0.5),
        mux=FakeMux(),
        probe=AliveProbe(),
        where=Where(socket=None, pane=None, session_id=None, actor="operator"),
        clock=time.time,
    )
    shown: list[str] = []
    try:
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: app.statuses.get("deliverer") == "error", timeout=10)
            shown.append(str(app.main.query_one(StatusBar).render()))
            toast = next(n for n in app._notifications if n.title == "Worker error")
            assert toast.message == "deliverer stopped: ValueError: a bug in the deliverer"
            seen.set()
            await until(pilot, lambda: app.statuses.get("deliverer") == "active", timeout=10)
            assert app.is_running
    finally:
        room.close()
    assert "error" in shown[0]
    assert len(runs) == 2


async def test_a_room_removed_under_the_console_is_not_made_again(tmp_path: Path) -> None:
    """The console's first connection makes a room that is not there yet; once it has
    one, its workers meet the room's removal as a fault (shown in the status bar) and
    none of them makes an empty room in its place."""
    home = tmp_path / "room"
    app = make_app(
        live_settings(home, deliver=True, safety_interval=0.2, restart_delay=0.2),
        mux=FakeMux(),
        probe=AliveProbe(),
        where=Where(socket=None, pane=None, session_id=None, actor="operator"),
        clock=time.time,
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: app.statuses.get("deliverer") == "active", timeout=10)
        assert (home / "room.db").exists()  # made by the first connection
        shutil.rmtree(home)
        with pytest.raises(RoomGone):
            app.open_room().close()
        await until(pilot, lambda: "gone" in app.statuses.get("reader", ""), timeout=10)
        await pilot.pause(1.0)  # the workers' passes and restarts meanwhile
        assert not home.exists()
