"""The deliverer's notes (why messages wait) never outlive the wait."""

from __future__ import annotations

from agent_room.adapters.processes import SystemProbe
from agent_room.room.service import Room
from agent_room.workers.deliverer import REST_INTERVAL, SAFETY_INTERVAL, Deliverer
from agent_room.workers.lease import STANDBY_INTERVAL
from tests.fakes import FakeMux


def test_a_note_goes_once_nothing_waits(room: Room) -> None:
    """Delivered at a Stop hook, a message leaves no queue behind and its note must go."""
    room.join("backend")
    room.join("frontend")
    room.store.set_note("frontend", "a permission dialog is open", at=room.clock())
    mux = FakeMux()
    deliverer = Deliverer(room, mux, SystemProbe())
    assert deliverer.run_once()
    assert room.store.notes() == {}
    assert mux.calls == []
    deliverer.release()


def test_a_deliverer_rests_only_while_nothing_is_timed(room: Room) -> None:
    """At rest (every session idle, nothing queued) it passes as often as it renews its
    lease; a busy session or a queued message bring back the second, standing by the
    stand-by's pace."""
    backend = room.join("backend")
    room.join("frontend")
    deliverer = Deliverer(room, FakeMux(), SystemProbe())
    assert deliverer.run_once()
    assert deliverer.next_wait() == REST_INTERVAL
    since = float(backend["updated_at"])
    assert room.store.settle_state("backend", "busy", was="idle", since=since, reason="t", at=1)
    deliverer.healer._read_at = float("-inf")  # the next pass looks again at once
    assert deliverer.run_once()
    assert deliverer.next_wait() == SAFETY_INTERVAL
    assert room.store.settle_state("backend", "idle", was="busy", since=1, reason="t", at=2)
    deliverer.healer._read_at = float("-inf")
    assert deliverer.run_once()
    assert deliverer.next_wait() == REST_INTERVAL
    room.send("backend", "frontend", "hello")  # queued for an idle member without a pane
    assert deliverer.run_once()
    assert deliverer.next_wait() == SAFETY_INTERVAL
    standby = Deliverer(room, FakeMux(), SystemProbe())
    assert not standby.run_once()
    assert standby.next_wait() == STANDBY_INTERVAL  # takes over soon when the holder goes
    deliverer.release()
