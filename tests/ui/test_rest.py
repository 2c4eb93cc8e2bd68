"""The console at rest: a lease renewed in the room wakes the watch, but not the reader.

Every worker holding a lease renews it about once a second, and each renewal is a write
to the room's database that the file watch reports. The reader reads the room again
only when something it shows may have changed; a real change still reaches the screen.
On PostgreSQL a renewal notifies nobody (``tests/workers/test_room_watch.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agent_room.core.native import NativeSession
from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.store.entities import MESSAGES_KEY
from agent_room.store.memory import bookmark
from agent_room.turn.room.registry import Registry
from agent_room.ui import reading as reading_module
from agent_room.ui.app import RoomConsole
from agent_room.ui.reading import Reading
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.workers.memory import MemoryWorker
from agent_room.workers.wakeup import RoomWatch
from tests.ui.conftest import until
from tests.ui.seed import AliveProbe, FrozenClock

SIZE = (160, 48)
pytestmark = pytest.mark.anyio


def _renew(room: Room, at: float) -> None:
    """A renewal of the deliverer's lease by its live holder, as the holder's worker does."""
    assert room.store.acquire_lease(
        "deliverer", holder="worker-1", pid=1, pid_start=None, ttl=3.0, at=at,
        alive=lambda *_: True,
    )  # fmt: skip


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the console's reader has read the room so far (one counter)."""
    count = [0]
    read = SnapshotReader.read

    def counted(self: SnapshotReader) -> object:
        count[0] += 1
        return read(self)

    monkeypatch.setattr(SnapshotReader, "read", counted)
    return count


@pytest.mark.sqlite  # the change count is SQLite's (PostgreSQL: its triggers)
async def test_lease_renewals_wake_the_watch_but_not_the_reader(
    console: Callable[..., RoomConsole],
    seeded: tuple[Room, FrozenClock],
    monkeypatch: pytest.MonkeyPatch,
    reads: list[int],
) -> None:
    room, _clock = seeded
    _renew(room, 999.0)  # taken: a new holder is a change
    heard = threading.Event()
    burst = RoomWatch._file_changes

    def seen(self: RoomWatch, changes: Sequence[tuple[object, str]]) -> None:
        heard.set()
        burst(self, changes)

    monkeypatch.setattr(RoomWatch, "_file_changes", seen)
    app = console(watch=True, safety_interval=3600.0)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.statuses.get("watcher") == "on")
        await until(pilot, lambda: app.snapshot is not None)
        table = app.main.query_one("#sessions", SessionsTable)
        before = reads[0]
        for n in range(5):
            heard.clear()
            _renew(room, 1000.0 + n)
            await until(pilot, heard.is_set)  # the watch saw the write...
            await pilot.pause(0.1)
        assert reads[0] == before  # ...and the reader did not read the room for it
        room.join("newcomer", pane="%9")
        await until(pilot, lambda: "newcomer" in [r.name for r in table.shown])
        assert reads[0] > before


async def test_a_room_at_rest_is_not_read_again_on_either_engine(
    console: Callable[..., RoomConsole],
    seeded: tuple[Room, FrozenClock],
    reads: list[int],
) -> None:
    """Safety passes ten times a second and the workers' renewals read nothing while
    nothing shown changes: on SQLite by the room's change count, on PostgreSQL by the
    wake-ups the console's watch hears (every commit that changes what the room shows
    notifies, a renewal does not). A change is read at once."""
    room, _clock = seeded
    _renew(room, 999.0)  # taken: a new holder is a change
    app = console(watch=True, safety_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.statuses.get("watcher") == "on")
        await until(pilot, lambda: app.snapshot is not None)
        table = app.main.query_one("#sessions", SessionsTable)
        await pilot.pause(1.0)  # the first reads, and one more as the watch listens
        before = reads[0]
        for n in range(5):
            _renew(room, 1000.0 + n)
            await pilot.pause(0.2)
        assert reads[0] == before, f"{reads[0] - before} reads of a room at rest"
        room.join("newcomer", pane="%9")
        await until(pilot, lambda: "newcomer" in [r.name for r in table.shown])
        assert reads[0] > before


async def test_the_palettes_read_again_still_reads_an_unchanged_room(
    console: Callable[..., RoomConsole], reads: list[int]
) -> None:
    app = console(safety_interval=3600.0)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.snapshot is not None and reads[0] > 0)
        before = reads[0]
        app.action_reread()
        await until(pilot, lambda: reads[0] > before)


@pytest.mark.sqlite  # the change count is SQLite's (PostgreSQL: its triggers)
def test_a_renewal_leaves_the_change_count_and_any_other_write_moves_it(
    seeded: tuple[Room, FrozenClock], room_home: Path
) -> None:
    """The room's change count moves with any change, never with a renewal alone."""
    room, _clock = seeded
    start = room.store.changes()
    assert start is not None
    _renew(room, 999.0)  # taken: a new holder is a change
    taken = room.store.changes()
    assert taken is not None
    assert taken > start
    start = taken
    _renew(room, 1000.0)
    _renew(room, 1001.0)
    assert room.store.changes() == start
    room.join("newcomer", pane="%9")
    moved = room.store.changes()
    assert moved is not None
    assert moved > start
    assert room.store.acquire_lease(  # another holder taking over is a change
        "deliverer", holder="worker-2", pid=2, pid_start=None, ttl=3.0, at=2000.0,
        alive=lambda *_: False,
    )  # fmt: skip
    assert room.store.changes() != moved


@pytest.mark.sqlite  # the change count is SQLite's (PostgreSQL: no trigger on the settings)
def test_the_memory_workers_places_leave_the_change_count(
    seeded: tuple[Room, FrozenClock],
) -> None:
    """A memory pass that only moves its places (the messages it scanned for entities)
    leaves the room's change count where it was: each message would otherwise wake every
    worker and the console once more, for nothing any of them shows."""
    room, _clock = seeded
    worker = MemoryWorker(room, AliveProbe(), use_lease=False)
    worker.run_once()  # the seeded messages: their entities, a real change
    sent = room.send("backend", "frontend", "nothing to name in these words")
    before = room.store.changes()
    worker.run_once()
    assert bookmark(room.store, MESSAGES_KEY) == sent  # scanned
    assert room.store.changes() == before
    room.send("frontend", "backend", "and a reply")
    assert room.store.changes() != before  # a message is a change


class _Native:
    """Claude Code's registry of sessions (``NativeRegistry``), as the test sets it."""

    sessions_dir: Path | None = None

    def __init__(self) -> None:
        self.listed: list[NativeSession] = []

    def sessions(self) -> list[NativeSession]:
        return list(self.listed)

    def entry(self, pid: int) -> NativeSession | None:
        return None

    def socket_facts(self, path: str) -> None:
        return None

    def peer_token(self, pid: int, path: str) -> None:
        return None


@pytest.mark.sqlite  # the change count is SQLite's (PostgreSQL: its triggers)
def test_a_pass_reads_the_room_only_when_something_shown_may_have_changed(
    seeded: tuple[Room, FrozenClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    room, _clock = seeded
    monkeypatch.setattr(reading_module, "OUTSIDE_INTERVAL", 0.0)  # the registry each pass
    native = _Native()
    reading = Reading(SnapshotReader(room, native=native))
    assert reading.read(timed=True) is not None  # the first pass
    assert reading.read(timed=True) is None  # a safety pass, nothing written
    _renew(room, 999.0)
    assert reading.read() is not None  # a new holder: a change
    _renew(room, 1000.0)
    assert reading.read() is None  # a renewal: none
    assert reading.read(asked=True) is not None  # the operator asks
    room.join("newcomer", pane="%9")
    assert reading.read() is not None
    native.listed.append(
        NativeSession(pid=4242, session_id="s-outside", cwd="/srv", kind="interactive")
    )
    assert reading.read() is not None  # a session outside the room came
    assert reading.read() is None
    monkeypatch.setattr(reading_module, "FULL_READ", 0.0)
    assert reading.read() is not None  # ages and time windows move on


class _EndingProbe(AliveProbe):
    """``AliveProbe`` until ``ended``: then no process runs."""

    ended = False

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        return not self.ended and super().is_alive(pid, start_ticks)


@pytest.mark.sqlite  # the change count is SQLite's (PostgreSQL: its triggers)
def test_a_safety_pass_reads_only_when_the_liveness_check_finds_a_process_ended(
    seeded: tuple[Room, FrozenClock],
) -> None:
    """The reader's safety pass checks the agents' processes (when the console's own
    injector does not); a process found ended is written to the room, which moves the
    change count: the room is read then, and not at every safety pass."""
    room, _clock = seeded
    probe = _EndingProbe()
    reader = SnapshotReader(room, registry=Registry(room, probe), liveness_interval=0.0)
    reading = Reading(reader)
    first = reading.read()
    assert first is not None
    running = {s.name for s in first.sessions if s.state != "ended" and s.pid is not None}
    assert running
    assert reading.read(timed=True) is None  # every process runs: nothing shown changed
    probe.ended = True
    assert reading.read() is None  # woken by a file event: no liveness check due
    found = reading.read(timed=True)
    assert found is not None
    assert {s.name for s in found.sessions if s.state == "ended"} >= running
