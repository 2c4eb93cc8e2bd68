"""The deliverer's notes (why messages wait) never outlive the wait."""

from __future__ import annotations

from agent_room.adapters.processes import SystemProbe
from agent_room.room import Room
from agent_room.workers.deliverer import Deliverer
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
