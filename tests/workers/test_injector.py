"""The injector worker: one active per room, wakes for the next timer, notices dead agents."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from agent_room.adapters import exits
from agent_room.adapters.exits import ProcessExits
from agent_room.adapters.processes import SystemProbe
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.turn.procfs import read_stat
from agent_room.workers import injector as injector_module
from agent_room.workers.injector import SAFETY_INTERVAL, Injector
from tests.poll import wait_for


def open_room(home: Path) -> Room:
    return Room.open({"AGENT_ROOM_HOME": str(home)}, long_lived=True)


def _register_live(room: Room, name: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["sleep", "600"])
    stat = read_stat(proc.pid)
    assert stat is not None
    room.store.register(
        {
            "session_id": f"s-{name}",
            "state": "idle",
            "pid": proc.pid,
            "pid_start": stat.start_ticks,
        },
        wanted=name,
        explicit=True,
        at=room.clock(),
        alive=lambda *_: True,
    )
    return proc


def test_one_injector_works_while_another_stands_by(room_home: Path) -> None:
    first, second = (
        Injector(open_room(room_home), SystemProbe()),
        Injector(open_room(room_home), SystemProbe()),
    )
    assert first.run_once()
    assert not second.run_once()
    first.release()
    assert second.run_once()
    second.release()


def test_the_wait_ends_when_the_next_timer_is_due(room: Room) -> None:
    worker = Injector(room, SystemProbe())
    assert worker.next_wait() == SAFETY_INTERVAL
    room.join("a")
    Links(room).set_timer("a", "anchor", "0.2s", "back")
    assert 0 < worker.next_wait() <= 0.2


def test_a_timer_fires_in_time_without_the_safety_net(
    room_home: Path, room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(injector_module, "SAFETY_INTERVAL", 60.0)  # only the timer wakes it
    room.join("a")
    room.join("b")
    timer = Links(room).set_timer("a", "check", "1s", "look at @b")
    worker = Injector(open_room(room_home), SystemProbe())
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()  # its first pass is before the timer is due: then nothing writes
    try:
        wait_for(lambda: Links(room).store.timer(timer["id"])["state"] == "fired", 10)  # type: ignore[index]
        [message] = room.store.unread("a")
        assert message["body"].startswith("CHECK: look at @b\n\n@b: idle")
    finally:
        stop.set()
        thread.join(timeout=10)
        worker.room.close()


def test_an_agent_killed_without_its_hook_is_noticed(room: Room, room_home: Path) -> None:
    proc = _register_live(room, "a")
    proc.kill()
    proc.wait()
    worker = Injector(open_room(room_home), SystemProbe())
    worker.run_once()
    assert room.store.holder("a")["state"] == "ended"  # type: ignore[index]
    worker.release()
    worker.room.close()


@pytest.mark.skipif(not exits.available(), reason="pidfds are Linux's")
def test_an_agent_killed_wakes_the_injector_at_rest(
    room: Room, room_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At rest it looks at no process: the kernel says when one ends, and it wakes then
    (not after a safety interval, which the test makes a minute)."""
    monkeypatch.setattr(injector_module, "REST_INTERVAL", 60.0)
    proc = _register_live(room, "a")
    probe = SystemProbe()
    worker = Injector(open_room(room_home), probe, exits=ProcessExits(probe.is_alive))
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_for(lambda: worker._watched, 10)
        assert worker.next_wait() == 60.0  # every process watched: at rest
        proc.kill()
        proc.wait()
        wait_for(lambda: room.store.holder("a")["state"] == "ended", 5)  # type: ignore[index]
    finally:
        stop.set()
        thread.join(timeout=10)
        worker.room.close()


@pytest.mark.skipif(not exits.available(), reason="pidfds are Linux's")
def test_process_exits_watch_the_registered_process_only() -> None:
    proc = subprocess.Popen(["sleep", "600"])
    stat = read_stat(proc.pid)
    assert stat is not None
    probe = SystemProbe()
    watched = ProcessExits(probe.is_alive)
    try:
        assert watched.watch([(proc.pid, stat.start_ticks)])
        assert not watched.ended()
        assert not watched.watch([(proc.pid, stat.start_ticks + 1)])  # its pid, reused
        assert watched.fds() == []
        assert watched.watch([(proc.pid, stat.start_ticks)])
        proc.kill()
        proc.wait()
        assert watched.ended()
        assert not watched.watch([(proc.pid, stat.start_ticks), (proc.pid + 10**6, None)])
    finally:
        watched.close()
        proc.kill()


@pytest.mark.skipif(not exits.available(), reason="pidfds are Linux's")
def test_the_wait_tells_the_wake_up_from_a_process_that_ended() -> None:
    proc = subprocess.Popen(["sleep", "600"])
    stat = read_stat(proc.pid)
    assert stat is not None
    watched = ProcessExits(SystemProbe().is_alive)
    woken_r, woken_w = os.pipe()
    try:
        assert watched.watch([(proc.pid, stat.start_ticks)])
        assert watched.wait(woken_r, 0.0) == (False, False)
        os.write(woken_w, b"x")
        assert watched.wait(woken_r, 1.0) == (True, False)  # a wake-up is not an ending
        assert not watched.ended()
        os.read(woken_r, 1)
        threading.Timer(0.2, proc.kill).start()
        began = time.monotonic()
        assert watched.wait(woken_r, 10.0) == (False, True)  # heard within the wait
        assert time.monotonic() - began < 5.0
        assert watched.ended()
    finally:
        proc.kill()
        proc.wait()
        watched.close()
        os.close(woken_r)
        os.close(woken_w)
