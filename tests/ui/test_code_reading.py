"""The console's code worker: a burst of the room's changes makes one pass more, not one
a change, and the last change of the burst is read; stopping ends it within a gap."""

from __future__ import annotations

import threading
import time

import pytest

from agent_room.core.overlaps import CodeSnapshot
from agent_room.room.code import CodeTracker
from agent_room.room.service import Room
from agent_room.ui.code import CodeReading
from tests.room.conftest import register


def test_a_burst_of_changes_makes_one_more_pass_which_reads_the_last(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes: list[int] = []
    real_refresh = CodeTracker.refresh

    def refresh(tracker: CodeTracker) -> CodeSnapshot:
        passes.append(len(room.store.members()))  # the room as the pass found it
        return real_refresh(tracker)

    monkeypatch.setattr(CodeTracker, "refresh", refresh)
    reading = CodeReading(gap=2.0)
    done = threading.Event()
    worker = threading.Thread(
        target=reading.run,
        args=(room, done.is_set, lambda _code: None, lambda _problem: None),
    )
    worker.start()
    try:
        reading.wake.set()
        deadline = time.monotonic() + 10
        while not passes and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(passes) == 1  # the first wake-up after a quiet while: at once
        for n in range(5):  # a message's changes, a few tens of ms apart
            register(room, f"agent{n}")
            reading.wake.set()
            time.sleep(0.03)
        last = len(room.store.members())
        deadline = time.monotonic() + 10
        while len(passes) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # no pass is left to come
        assert passes[1:] == [last]  # one pass for the burst, after its last change
        reading.wake.set()  # within the gap of that pass: waits for its end
        time.sleep(0.2)
    finally:
        started = time.monotonic()
        reading.stop()
        worker.join(timeout=5)
    assert not worker.is_alive()
    assert time.monotonic() - started < 1.0  # stopped within the gap, not after it
    assert len(passes) == 2
