"""The message flow as the console shows it: rows in the order things happened, each with
the status its message had at that moment (a "chat sent" row says queued, even once the
message is read)."""

from __future__ import annotations

from pathlib import Path

from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.turn.store.sqlite import SqliteStore
from tests.ui.seed import FrozenClock


def test_each_row_has_the_status_of_its_moment(room_home: Path) -> None:
    clock = FrozenClock()
    room = Room(SqliteStore(room_home), clock=clock)
    try:
        room.join("api", pane="%1")
        room.join("web", pane="%2")
        sent = room.send("api", "web", "GET /tasks is live")
        clock.advance(1)
        room.store.mark_delivered("web", [sent], at=clock(), via="tmux")
        clock.advance(1)
        room.store.mark_read("web", [sent], at=clock())
        flow = SnapshotReader(room).read().flow
    finally:
        room.close()
    rows = [(e.kind, e.status) for e in flow if e.message_id == sent]
    assert rows == [("sent", "queued"), ("delivered", "delivered"), ("read", "read")]


def test_rows_are_in_time_order_whoever_wrote_first(room_home: Path) -> None:
    """In a storm, a process that read the clock first can write its event second: the
    flow still shows the earlier one first."""
    clock = FrozenClock()
    room = Room(SqliteStore(room_home), clock=clock)
    try:
        room.join("api", pane="%1")
        room.join("web", pane="%2")
        clock.advance(10)
        late = room.send("api", "web", "written first, happened second")
        clock.advance(-5)  # another sender's earlier clock reading, committed after
        early = room.send("web", "api", "written second, happened first")
        flow = SnapshotReader(room).read().flow
    finally:
        room.close()
    order = [e.message_id for e in flow if e.kind == "sent"]
    assert order == [early, late]
    assert [e.at for e in flow] == sorted(e.at for e in flow)
