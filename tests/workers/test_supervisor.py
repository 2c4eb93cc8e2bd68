"""The one supervisor of the leased workers (``agent-room watch``, the background watch and
the console): news told once per change, a passing fault lived through, an unforeseen one
restarted on a fresh connection, and a clean stop handing every lease over at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.room.service import Room
from agent_room.workers.lease import LEASE_TTL
from agent_room.workers.supervisor import Job, Report, State, Supervisor, room_jobs
from agent_room.workers.wakeup import RoomWatch
from tests.fakes import FakeMux
from tests.poll import wait_for

LEASED = ("deliverer", "injector", "memory")


class Heard:
    """Every report, in order, from the workers' threads."""

    def __init__(self) -> None:
        self.reports: list[Report] = []
        self._lock = threading.Lock()

    def __call__(self, report: Report) -> None:
        with self._lock:
            self.reports.append(report)

    def states(self, worker: str) -> list[State]:
        with self._lock:
            return [r.state for r in self.reports if r.worker == worker]


class Scripted:
    """A stand-in worker (a unit test's fake) that plays its passes from a script."""

    def __init__(self, script: Callable[..., None]) -> None:
        self.script = script

    def run(
        self,
        stop: threading.Event,
        *,
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        assert on_pass is not None
        assert on_problem is not None
        self.script(stop, on_pass, on_problem)


@pytest.fixture
def opened(room_home: Path) -> Iterator[Callable[[], Room]]:
    """Opens the test's room; every connection opened is closed by the end of the test."""
    rooms: list[Room] = []

    def open_room() -> Room:
        rooms.append(Room.open({"AGENT_ROOM_HOME": str(room_home)}, long_lived=True))
        return rooms[-1]

    yield open_room
    for room in rooms:
        room.close()


def test_news_is_told_once_per_change_and_a_passing_fault_ends_nothing(
    opened: Callable[[], Room],
) -> None:
    runs: list[int] = []

    def script(
        stop: threading.Event, on_pass: Callable[[bool], None], on_problem: Callable[..., None]
    ) -> None:
        runs.append(1)
        on_pass(True)
        on_pass(True)  # unchanged: not told again
        on_problem("the room database: database is locked")
        on_problem(None)
        on_pass(True)  # after a fault: told again
        on_pass(False)
        stop.wait()

    heard = Heard()
    supervisor = Supervisor(opened, heard, restart_delay=0.01)
    supervisor.start([Job("deliverer", lambda room: Scripted(script))])
    wait_for(lambda: State.STANDBY in heard.states("deliverer"))
    supervisor.stop()
    supervisor.join()
    assert heard.states("deliverer") == [
        State.ACTIVE,
        State.RETRYING,
        State.RECOVERED,
        State.ACTIVE,
        State.STANDBY,
        State.OFF,
    ]
    retrying = next(r for r in heard.reports if r.state is State.RETRYING)
    assert retrying.detail == "the room database: database is locked"
    assert runs == [1]  # a passing fault never restarts the worker


def test_an_unforeseen_fault_is_told_and_the_worker_starts_again_on_a_new_connection(
    opened: Callable[[], Room], monkeypatch: pytest.MonkeyPatch
) -> None:
    connections: list[Room] = []
    closed: list[Room] = []

    def make(room: Room) -> Scripted:
        connections.append(room)
        close = room.close

        def closing() -> None:
            closed.append(room)
            close()

        monkeypatch.setattr(room, "close", closing)

        def script(stop: threading.Event, on_pass: Callable[[bool], None], *_: object) -> None:
            if len(connections) == 1:
                raise KeyError("a bug")
            on_pass(True)
            stop.wait()

        return Scripted(script)

    heard = Heard()
    supervisor = Supervisor(opened, heard, restart_delay=0.05)
    supervisor.start([Job("injector", make)])
    wait_for(lambda: State.ACTIVE in heard.states("injector"))
    assert closed == connections[:1]  # the failed run's connection, closed before the next
    supervisor.stop()
    supervisor.join()
    assert heard.states("injector") == [State.FAILED, State.ACTIVE, State.OFF]
    assert heard.reports[0].detail == "KeyError: 'a bug'"
    assert len(connections) == 2
    assert closed == connections


def test_with_no_restart_delay_a_failed_worker_stays_down(opened: Callable[[], Room]) -> None:
    def script(*_: object) -> None:
        raise RuntimeError("broken")

    heard = Heard()
    supervisor = Supervisor(opened, heard, restart_delay=0)
    supervisor.start([Job("memory", lambda room: Scripted(script))])
    supervisor.join(timeout=5)
    assert heard.states("memory") == [State.FAILED]
    assert not supervisor.stop_event.is_set()


def test_a_room_that_cannot_be_opened_is_tried_again(room_home: Path) -> None:
    tries: list[int] = []

    def open_room() -> Room:
        tries.append(1)
        raise OSError("the disk is away")

    heard = Heard()
    supervisor = Supervisor(open_room, heard, restart_delay=0.02)
    supervisor.start([Job("notifier", lambda room: Scripted(lambda *_: None))])
    wait_for(lambda: len(tries) >= 3)
    supervisor.stop()
    supervisor.join()
    *failed, last = heard.states("notifier")
    assert set(failed) == {State.FAILED}
    assert last is State.OFF  # stopped while waiting to start again
    assert heard.reports[0].detail == "OSError: the disk is away"


def test_a_stopped_process_hands_every_lease_to_the_stand_by_at_once(
    room: Room, opened: Callable[[], Room]
) -> None:
    """Two processes' worth of the real workers on one room: one holds each lease, the
    other stands by; the holder stopped, the stand-by acts well before a lease expires."""
    watches = [RoomWatch(room.home, debounce=10, step=5, stop=threading.Event()) for _ in "ab"]
    heard = [Heard(), Heard()]
    supervisors = [Supervisor(opened, heard[n], stop=watches[n].stop) for n in (0, 1)]
    first, second = supervisors
    try:
        first.start(room_jobs(FakeMux(), SystemProbe(), watches[0], {}))
        wait_for(lambda: all(State.ACTIVE in heard[0].states(w) for w in LEASED))
        second.start(room_jobs(FakeMux(), SystemProbe(), watches[1], {}))
        wait_for(lambda: all(State.STANDBY in heard[1].states(w) for w in LEASED))
        stopped = time.monotonic()
        watches[0].close()  # the watch's stop is the supervisor's: every worker wakes
        first.join()
        assert all(heard[0].states(w)[-1] is State.OFF for w in LEASED)
        wait_for(lambda: all(heard[1].states(w)[-1] is State.ACTIVE for w in LEASED))
        assert time.monotonic() - stopped < LEASE_TTL / 2
    finally:
        for watch, supervisor in zip(watches, supervisors, strict=True):
            watch.close()
            supervisor.join()
            watch.join()
