"""``Pace``: how fast the room changes, from the reader's passes over the room's log."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agent_room.core.enums import SessionState
from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.turn.room.registry import Registry
from agent_room.ui import reading as reading_module
from agent_room.ui.reading import Pace, Reading
from tests.ui.seed import AliveProbe, FrozenClock


def test_changes_now_and_then_are_not_busy_a_stream_is() -> None:
    pace = Pace(busy_rate=8.0, window=1.0)
    for n in range(10):  # a hook every half second, two events each
        pace.note(2 * n, 0.5 * n)
    assert not pace.busy()
    for n in range(10):  # then twenty changes a second
        pace.note(20 + n, 5.0 + 0.05 * n)
    assert pace.busy()


def test_a_stream_that_has_just_begun_is_counted_over_the_whole_window() -> None:
    """Its first changes show at once: a burst of five within a tenth of a second, after a
    quiet spell, is five changes a second, not fifty."""
    pace = Pace(busy_rate=8.0, window=1.0)
    pace.note(0, 0.0)
    for n in range(1, 6):
        pace.note(n, 10.0 + 0.02 * n)
    assert not pace.busy()
    pace.note(9, 10.2)
    assert pace.busy()  # eight changes within the window, and a little of the first


def test_the_rate_is_over_the_window_however_long_the_reader_paused() -> None:
    """A reader that paused two seconds finds the changes of those two seconds."""
    pace = Pace(busy_rate=8.0, window=1.0)
    pace.note(0, 0.0)
    pace.note(12, 2.0)  # six a second
    assert not pace.busy()
    pace.note(44, 4.0)  # sixteen a second
    assert pace.busy()


def test_the_reader_paces_by_the_rooms_log_the_same_on_either_engine(
    seeded: tuple[Room, FrozenClock], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn begun or ended every half second (an agent's hooks) is not a busy room, nor
    are the workers' renewals of their leases however often; a dozen turns a second
    (agents talking: six events a message) is. The same on SQLite and PostgreSQL: the
    room's log, not how an engine counts its writes or wakes its watchers."""
    room, _clock = seeded
    now = [1000.0]
    monkeypatch.setattr(reading_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    registry = Registry(room, AliveProbe())
    reading = Reading(SnapshotReader(room))
    states = (SessionState.BUSY, SessionState.IDLE)

    def passes(seconds: float, changes_a_second: float, *, renewals: bool = False) -> None:
        """The reader passing every quarter second while the room changes."""
        changes = 0
        for step in range(int(seconds * 4)):
            now[0] += 0.25
            while changes < (step + 1) * changes_a_second / 4:
                registry.set_state("sess-frontend", states[changes % 2])
                changes += 1
            if renewals:  # a worker renewing its lease: a write, not a change
                assert room.store.acquire_lease(
                    "deliverer", holder="w", pid=1, pid_start=None, ttl=3.0, at=now[0],
                    alive=lambda *_: True,
                )  # fmt: skip
            reading.read()

    reading.read()
    passes(3.0, 2.0)
    assert not reading.pace.busy()
    passes(3.0, 0.0, renewals=True)
    assert not reading.pace.busy()
    passes(2.0, 12.0)
    assert reading.pace.busy()
    passes(2.0, 0.0)
    assert not reading.pace.busy()
