"""A deliverer woken by the room's changes passes over the wake-ups of its own writes.

Each message makes the deliverer write twice (the nudge it typed, the nudge it closed at
the receipt), and every write wakes every watcher of the room, the deliverer too: its
pass just before saw everything those writes changed. The room's change count says how
much moved since a mark, the deliverer's connection how much of it was its own.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from agent_room.adapters.processes import SystemProbe
from agent_room.room.service import Room
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.wakeup import RoomWatch
from tests.fakes import IdleMux
from tests.room.conftest import register


def test_a_store_tells_its_own_writes_from_others(room: Room, room_home: Path) -> None:
    """On SQLite its own writes since a mark leave ``others_wrote`` false and any other
    connection's change makes it true (a lease renewed or a place moved is no change);
    on PostgreSQL, whose watchers hear only others' changes, it is always true."""
    other = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        mark = room.store.mark()
        sqlite = room.store.engine == "sqlite"
        assert (mark is not None) == sqlite
        room.join("backend")  # this store's own write
        assert room.store.others_wrote(mark) is not sqlite
        other.join("frontend")
        assert room.store.others_wrote(mark)
        mark = room.store.mark()
        other.store.set_note("frontend", "", at=other.clock())  # no change: nothing written
        assert room.store.others_wrote(mark) is not sqlite
    finally:
        other.close()


def test_its_own_nudge_wakes_no_second_pass_and_anothers_change_does(room: Room) -> None:
    """The nudge typed and recorded wakes the deliverer through the room's watch: no
    pass follows for it, the next comes with the safety interval; a change by another
    process brings one at once. (On PostgreSQL the server's wake-ups of one send may
    come apart, each a pass: the count of passes is SQLite's to hold.)"""
    register(room, "backend", pane="%1")
    register(room, "frontend", pane="%2")
    typed = threading.Event()
    at_typing: list[int] = []

    def on_typed(_pane: str, _text: str) -> None:
        at_typing.append(deliverer.passes)  # the pass that types, counted at its start
        typed.set()

    deliverer = Deliverer(room, IdleMux(on_typed), SystemProbe())  # type: ignore[arg-type]
    stop = threading.Event()
    watch = RoomWatch(room.home, debounce=10, step=5, stop=stop)
    deliverer.room_watch = watch
    worker = threading.Thread(target=deliverer.run, args=(stop,), daemon=True)
    other = Room.open({"AGENT_ROOM_HOME": room.home})
    try:
        worker.start()
        time.sleep(0.3)  # its first passes, at rest
        other.send("backend", "frontend", "the schema is live")
        assert typed.wait(5)
        time.sleep(0.5)  # the watch reported the nudge written; the safety pass is 1 s off
        if room.store.engine == "sqlite":
            assert deliverer.passes == at_typing[0]
        register(other, "docs", pane="%3")  # another process's change
        time.sleep(0.3)
        assert deliverer.passes > at_typing[0]
    finally:
        stop.set()
        watch.close()
        worker.join(timeout=5)
        other.close()
