"""The direct wake-up: a send pokes the active deliverer; the FIFO is private and stays."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.turn.store.wake import WAKE_NAME, poke
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.injector import Injector
from agent_room.workers.lease import STANDBY_INTERVAL, LeasedWorker
from agent_room.workers.memory import MemoryWorker
from agent_room.workers.notifier import Notifier
from agent_room.workers.wakeup import WakeListener
from tests.fakes import FakeMux
from tests.poll import wait_for


@pytest.fixture
def listener(room: Room) -> Iterator[WakeListener]:
    bound = WakeListener(room.home)
    bound.bind()
    yield bound
    bound.close()


def test_queued_messages_poke_and_held_handovers_do_not(room: Room, listener: WakeListener) -> None:
    room.join("backend")
    room.join("frontend")
    listener.drain()
    room.send("backend", "frontend", "ready")
    assert listener.drain() == 1
    handover = room.send_handover("backend", "frontend", body="take over the API")
    assert listener.drain() == 0  # held for the operator: nothing to deliver yet
    room.approve(handover)
    assert listener.drain() == 1


def test_the_fifo_is_private_and_outlives_its_listener(room: Room) -> None:
    path = Path(room.home) / WAKE_NAME
    first = WakeListener(room.home)
    first.bind()
    mode = path.lstat().st_mode
    assert stat.S_ISFIFO(mode)
    assert stat.S_IMODE(mode) == 0o600
    first.close()
    poke(room.home)  # nobody listens: nothing blocks, nothing fails
    second = WakeListener(room.home)
    second.bind()
    poke(room.home)
    assert second.drain() == 1
    assert second.drain() == 0  # drained, and no end-of-file once the poker is gone
    second.close()


def test_a_file_in_the_fifos_place_is_never_written(room: Room) -> None:
    path = Path(room.home) / WAKE_NAME
    path.write_text("")
    os.chmod(path, 0o600)
    poke(room.home)
    assert path.read_text() == ""
    listener = WakeListener(room.home)
    listener.bind()  # replaced by a FIFO
    assert stat.S_ISFIFO(path.lstat().st_mode)
    listener.close()


def _running(room_home: str) -> tuple[Deliverer, Callable[[], None]]:
    own = Room.open({"AGENT_ROOM_HOME": room_home}, long_lived=True)
    mux = FakeMux()
    worker = Deliverer(own, mux, SystemProbe())
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()

    def finish() -> None:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive()
        assert mux.calls == []  # no pane, nothing queued: nothing typed
        own.close()

    return worker, finish


def test_only_the_lease_holder_listens(room: Room) -> None:
    active, finish_active = _running(room.home)
    wait_for(lambda: active.active and active.wake.fd is not None)
    standby, finish_standby = _running(room.home)
    wait_for(lambda: standby.passes >= 2)
    assert not standby.active
    assert standby.wake.fd is None
    finish_active()  # releases the lease: the stand-by takes over and listens
    wait_for(lambda: standby.active and standby.wake.fd is not None)
    finish_standby()
    assert standby.wake.fd is None


def test_a_stand_by_does_not_pass_at_each_change_and_takes_over_on_its_clock(
    room: Room,
) -> None:
    """Only the lease's holder acts on the room's changes: a stand-by woken by each would
    only find the lease held again. It looks on its own clock (``STANDBY_INTERVAL``),
    and takes over within it once the holder gives the lease up."""
    active, finish_active = _running(room.home)
    wait_for(lambda: active.active and active.passes >= 1)
    standby, finish_standby = _running(room.home)
    wait_for(lambda: standby.passes >= 1)
    assert not standby.active
    before = standby.passes
    for n in range(12):  # a dozen changes in about 0.6 s: a dozen bursts for a watcher
        room.join(f"newcomer-{n}")
        threading.Event().wait(0.05)
    held = standby.passes - before
    assert held <= 2, f"the stand-by passed {held} times in 0.6 s of changes"
    assert active.passes > 3  # the holder did pass at them
    finish_active()
    wait_for(lambda: standby.active, timeout=5)
    finish_standby()


@pytest.mark.parametrize(("active", "stopping", "woken"), [
    (True, False, True), (False, False, False), (False, True, True),
])  # fmt: skip
def test_a_change_wakes_a_worker_while_it_holds_its_lease_or_stops(
    active: bool, stopping: bool, woken: bool
) -> None:
    class Worker(LeasedWorker):
        lease = None

        @property
        def active(self) -> bool:
            return active

    calls: list[str] = []
    stop = threading.Event()
    if stopping:
        stop.set()
    Worker().while_active(lambda: calls.append("woken"), stop)()
    assert calls == (["woken"] if woken else [])


@pytest.mark.parametrize("kind", ["deliverer", "injector", "memory", "notifier"])
def test_a_stand_by_looks_at_its_lease_at_the_stand_by_pace_whatever_its_work(
    room: Room, kind: str
) -> None:
    """A worker whose lease another holds looks again in ``STANDBY_INTERVAL``, not at its
    working pace (a second while an agent is in a turn or a timer is due): a console
    beside a background deliverer stands by with all four."""
    room.join("backend")
    room.join("frontend")
    room.send("backend", "frontend", "ready")  # work a holder would come back for soon
    Links(room).set_timer("backend", "check", "1s", "look at frontend's answer")
    opened: list[Room] = []

    def worker() -> Deliverer | Injector | MemoryWorker | Notifier:
        own = Room.open({"AGENT_ROOM_HOME": room.home}, long_lived=True)
        opened.append(own)
        if kind == "deliverer":
            return Deliverer(own, FakeMux(), SystemProbe())
        if kind == "injector":
            return Injector(own, SystemProbe())
        if kind == "memory":
            return MemoryWorker(own, SystemProbe())
        return Notifier(own, SystemProbe(), [])

    holder, standby = worker(), worker()
    try:
        holder.run_once()
        standby.run_once()
        assert holder.active
        assert not standby.active
        assert standby.next_wait() == STANDBY_INTERVAL
    finally:
        holder.release()
        for own in opened:
            own.close()
