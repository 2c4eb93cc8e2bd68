"""One watch of the room per process, fanned out to every worker that listens."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.room import Room
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.injector import Injector
from agent_room.workers.wakeup import RoomWatch
from tests.fakes import FakeMux
from tests.tmux.conftest import wait_for


def _watchers() -> int:
    return sum(t.name == "agent-room-watchfiles" and t.is_alive() for t in threading.enumerate())


def _changed(home: str, *heard: Counter) -> bool:
    """Change a file in the room until every one of ``heard`` was called (the watch may
    not be watching yet when the first change is made)."""
    (Path(home) / "note.txt").write_text("changed")
    return all(counter.calls for counter in heard)


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1


@pytest.fixture
def shared(room: Room) -> Iterator[RoomWatch]:
    watch = RoomWatch(room.home, debounce=10, step=5, stop=threading.Event())
    yield watch
    watch.stop.set()
    watch.join()


def test_every_listener_hears_a_change_through_one_watch(room: Room, shared: RoomWatch) -> None:
    before = _watchers()
    first, second, db_only = Counter(), Counter(), Counter()
    shared.subscribe(first)
    shared.subscribe(second)
    shared.subscribe(db_only, want=lambda path: Path(path).name == "room.db-wal")
    assert _watchers() == before + 1
    wait_for(lambda: _changed(room.home, first, second))
    assert db_only.calls == 0  # not a change it wants
    room.join("backend")  # a write to the database
    wait_for(lambda: db_only.calls)


def test_a_listener_gone_is_not_called_and_the_end_is_heard(room: Room, shared: RoomWatch) -> None:
    staying, leaving = Counter(), Counter()
    shared.subscribe(staying)
    shared.subscribe(leaving)
    shared.unsubscribe(leaving)
    wait_for(lambda: _changed(room.home, staying))
    heard = staying.calls
    shared.stop.set()
    shared.join()
    assert staying.calls == heard + 1  # the end, so that it looks at its own stop
    assert leaving.calls == 0


def test_the_workers_of_a_process_share_one_watch(room: Room, shared: RoomWatch) -> None:
    """The deliverer and the injector given the process's watch start none of their own,
    and both are woken by it."""
    before = _watchers()
    stop = threading.Event()
    env = {"AGENT_ROOM_HOME": room.home}
    delivery_room, injector_room = Room.open(env), Room.open(env)
    deliverer = Deliverer(delivery_room, FakeMux(), SystemProbe())
    injector = Injector(injector_room, SystemProbe())
    threads = [
        threading.Thread(target=w.run, args=(stop,), kwargs={"room_watch": shared})
        for w in (deliverer, injector)
    ]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: deliverer.passes >= 1)
        assert _watchers() == before + 1
        passes = deliverer.passes
        room.join("backend")  # a room change: the deliverer passes again before its timer
        wait_for(lambda: deliverer.passes > passes, timeout=0.4, step=0.005)
    finally:
        stop.set()
        shared.stop.set()
        for thread in threads:
            thread.join(timeout=5)
        delivery_room.close()
        injector_room.close()
    assert not any(thread.is_alive() for thread in threads)
