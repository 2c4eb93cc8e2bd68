"""One watch of the room per process, fanned out to every worker that listens."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_room.adapters.inotify import DirectoryEvents
from agent_room.adapters.processes import SystemProbe
from agent_room.room.service import Room
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.injector import Injector
from agent_room.workers.wakeup import RELAXED, STOP_CHECK, RoomWatch
from tests.conftest import write_room_conf
from tests.fakes import FakeMux
from tests.pgcluster import Cluster
from tests.poll import wait_for


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
    delivery_room, injector_room = Room.open(env, long_lived=True), Room.open(env, long_lived=True)
    deliverer = Deliverer(delivery_room, FakeMux(), SystemProbe(), room_watch=shared)
    injector = Injector(injector_room, SystemProbe(), room_watch=shared)
    threads = [threading.Thread(target=w.run, args=(stop,)) for w in (deliverer, injector)]
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


@pytest.mark.sqlite  # the change count is SQLite's (PostgreSQL: its triggers)
def test_a_lease_renewed_wakes_no_listener_and_a_change_does(
    room: Room, shared: RoomWatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker renews its lease about every second: a write the watch sees, but one
    that nothing listening acts on (the room's change count stays)."""
    bursts: list[object] = []
    burst = RoomWatch._file_changes

    def seen(self: RoomWatch, changes: Sequence[tuple[object, str]]) -> None:
        bursts.append(changes)
        burst(self, changes)

    monkeypatch.setattr(RoomWatch, "_file_changes", seen)
    listener = Counter()
    shared.subscribe(listener)

    def renew(at: float) -> None:
        assert room.store.acquire_lease(
            "deliverer", holder="h", pid=1, pid_start=None, ttl=3.0, at=at, alive=lambda *_: True
        )

    renew(1000.0)  # taken: a new holder is a change
    wait_for(lambda: listener.calls)
    for n in range(1, 4):
        seen_before, calls = len(bursts), listener.calls
        renew(1000.0 + n)
        wait_for(lambda: len(bursts) > seen_before)  # noqa: B023 - waited for at once
        time.sleep(0.05)
        assert listener.calls == calls
    room.join("backend")
    wait_for(lambda: listener.calls > calls)


def test_without_inotify_watchfiles_watches(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the kernel has no inotify (not Linux), the watch falls back to watchfiles."""
    import watchfiles

    from agent_room.adapters import inotify

    monkeypatch.setattr(inotify, "available", lambda: False)
    used = Counter()
    watch_files = watchfiles.watch

    def counted(*args: Any, **kwargs: Any) -> Any:
        used()
        return watch_files(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "watch", counted)
    watch = RoomWatch(room.home, debounce=10, step=5, stop=threading.Event())
    heard = Counter()
    try:
        watch.subscribe(heard)
        wait_for(lambda: _changed(room.home, heard))
        assert used.calls == 1
    finally:
        watch.stop.set()
        watch.join()


def test_on_postgresql_a_lease_renewed_notifies_nobody(tmp_path: Path, pg_cluster: Cluster) -> None:
    """The server's triggers notify the room's watchers of changes only: a new holder of a
    lease is one (an event), its renewals are not."""
    home = tmp_path / "pgroom"
    write_room_conf(home, pg_cluster.new_room(f"room_{time.monotonic_ns()}"))
    room = Room.open({"AGENT_ROOM_HOME": str(home)}, long_lived=True)
    watch = RoomWatch(str(home), debounce=10, step=5, stop=threading.Event())
    listener = Counter()

    def renew(at: float) -> None:
        assert room.store.acquire_lease(
            "deliverer", holder="h", pid=1, pid_start=None, ttl=3.0, at=at, alive=lambda *_: True
        )

    try:
        watch.subscribe(listener)  # returns once the LISTEN is in place
        renew(1000.0)
        wait_for(lambda: listener.calls)
        time.sleep(0.3)
        calls = listener.calls
        for n in range(1, 4):
            renew(1000.0 + n)
        time.sleep(0.6)  # the listener looks every half second
        assert listener.calls == calls
        room.join("backend")
        wait_for(lambda: listener.calls > calls)
    finally:
        watch.stop.set()
        watch.join()
        room.close()


@pytest.mark.sqlite  # the change count is SQLite's
def test_a_burst_passed_over_is_looked_at_again(
    room: Room, shared: RoomWatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer held up between its last write and its commit being seen: the burst's
    count stood still, the next look (half a second on) finds it moved."""
    answers = iter([False, True])
    monkeypatch.setattr(RoomWatch, "_count_moved", lambda self: next(answers, False))
    listener = Counter()
    shared.subscribe(listener)
    room.join("backend")  # a burst of database events only
    wait_for(lambda: listener.calls, timeout=STOP_CHECK + 3)
    assert listener.calls == 1


@pytest.mark.parametrize("end", ["close", "stop and join"])
def test_the_watch_ends_at_once_when_told(room: Room, end: str) -> None:
    """A quiet watch looks at its stop only every STOP_CHECK: ``close`` (the console) and
    ``join`` after ``stop`` (the workers, ``watch``) wake it at once."""
    before = _watchers()
    watch = RoomWatch(room.home, debounce=10, step=5, stop=threading.Event())
    heard = Counter()
    watch.subscribe(heard)
    assert _watchers() == before + 1
    time.sleep(0.1)  # asleep in its wait
    started = time.monotonic()
    if end == "close":
        watch.close()
    else:
        watch.stop.set()
        watch.join(timeout=STOP_CHECK / 4)
    wait_for(lambda: _watchers() == before, timeout=STOP_CHECK / 2)
    assert time.monotonic() - started < STOP_CHECK / 2
    assert heard.calls == 1  # the end, so that it looks at its own stop


def test_a_burst_of_writes_is_read_a_few_times_and_heard_once(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written fifty times a millisecond apart (a commit writes its pages one by
    one, each an event) is read at each step of the burst, not at each write, and the
    listeners hear it once."""
    reads = Counter()
    real_read = DirectoryEvents.read

    def counted(events: DirectoryEvents) -> set[str]:
        reads()
        return real_read(events)

    monkeypatch.setattr(DirectoryEvents, "read", counted)
    watch = RoomWatch(room.home, debounce=2000, step=40, stop=threading.Event())
    heard = Counter()
    try:
        watch.subscribe(heard, want=lambda path: Path(path).name == "burst.txt")
        time.sleep(0.1)
        before = reads.calls
        started = time.monotonic()
        with (Path(room.home) / "burst.txt").open("w") as file:
            for n in range(50):
                file.write(f"{n}\n")
                file.flush()
                time.sleep(0.001)
        steps = (time.monotonic() - started) / 0.04  # how many steps the writes took
        wait_for(lambda: heard.calls)
        time.sleep(0.3)
        assert heard.calls == 1
        assert reads.calls - before <= steps + 3  # the first events, then one read a step
    finally:
        watch.stop.set()
        watch.join()


def test_a_deliverer_at_rest_ends_as_soon_as_the_watch_ends(room: Room, shared: RoomWatch) -> None:
    """A deliverer waiting out its rest interval ends at the watch's last wake-up (a
    ``watch`` stopping, its room removed), not at the end of the interval."""
    stop = threading.Event()
    delivery_room = Room.open({"AGENT_ROOM_HOME": room.home}, long_lived=True)
    deliverer = Deliverer(delivery_room, FakeMux(), SystemProbe(), room_watch=shared)
    assert deliverer.next_wait() >= 1.0  # at rest: a pass every interval
    thread = threading.Thread(target=deliverer.run, args=(stop,))
    thread.start()
    try:
        wait_for(lambda: deliverer.passes >= 1)
        time.sleep(0.1)  # asleep in its wait
        started = time.monotonic()
        stop.set()
        shared.close()
        thread.join(timeout=5)
        assert time.monotonic() - started < 0.5
    finally:
        stop.set()
        shared.stop.set()
        thread.join(timeout=5)
        delivery_room.close()
    assert not thread.is_alive()


def _files_changed(home: str, count: int, gap: float) -> None:
    """``count`` changes of a file in the room, ``gap`` seconds apart (a burst each)."""
    for n in range(count):
        (Path(home) / "note.txt").write_text(f"changed {n}")
        time.sleep(gap)


@pytest.mark.parametrize("prompt", [True, False])
def test_a_watch_rests_between_bursts_while_no_listener_needs_them_at_once(
    room: Room, shared: RoomWatch, prompt: bool
) -> None:
    """A listener that needs changes at once is called at each burst; while none does
    (a console whose workers stand by, between two pictures) the watch rests ``RELAXED``
    after each, and the changes made meanwhile come as one."""
    heard = Counter()
    shared.subscribe(heard, prompt=lambda: prompt)
    wait_for(lambda: _changed(room.home, heard))
    time.sleep(RELAXED)  # the first change's rest over
    before = heard.calls
    _files_changed(room.home, 10, 0.1)  # ten bursts in a second
    time.sleep(RELAXED + 0.2)  # the last rest over: the last changes heard
    calls = heard.calls - before
    if prompt:
        assert calls >= 8, f"called {calls} times for ten bursts"
    else:
        assert 1 <= calls <= 4, f"called {calls} times in a second of changes, resting"


def test_a_listener_that_needs_changes_again_ends_the_rest(room: Room, shared: RoomWatch) -> None:
    """``hurry``: the next change is heard at once, not at the end of the rest."""
    heard, soon = Counter(), threading.Event()
    shared.subscribe(heard, prompt=soon.is_set)
    wait_for(lambda: _changed(room.home, heard))
    time.sleep(RELAXED)
    before = heard.calls
    (Path(room.home) / "note.txt").write_text("one")  # heard, then a rest begins
    wait_for(lambda: heard.calls > before, timeout=2)
    soon.set()
    shared.hurry()
    started = time.monotonic()
    (Path(room.home) / "note.txt").write_text("two")
    wait_for(lambda: heard.calls > before + 1, timeout=2, step=0.005)
    assert time.monotonic() - started < RELAXED / 2
