"""The fleet-wide loop breaker: plain messages, handovers and link crossings that run in a
loop between agents (a pair, or a longer cycle) are held for the operator."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.turn.core.errors import Refused


def statuses(room: Room) -> list[str]:
    return [m["status"] for m in room.store.history(500) if m["kind"] != "system"]


def ping_pong(room: Room, messages: int, a: str = "a", b: str = "b") -> None:
    for n in range(messages):
        sender, recipient = (a, b) if n % 2 == 0 else (b, a)
        room.send(sender, recipient, f"reply {n}")


def test_sixty_ping_pong_messages_in_a_minute_are_held_after_the_threshold(linked: Room) -> None:
    ping_pong(linked, 60)  # the test clock: all within a second
    found = statuses(linked)
    assert found[:19] == ["queued"] * 19  # 10 a->b and 9 b->a pass
    assert found[19:] == ["held"] * 41  # the 10th b->a closes the loop; both ways held
    assert linked.store.unread("a")[-1]["body"] == "reply 17"
    held = [m for m in linked.store.history(500) if m["status"] == "held"]
    assert held[0]["failure"].startswith("held by the loop breaker: loop #1 @b → @a → @b;")
    assert "agent-room loops release 1" in held[0]["failure"]


def test_a_longer_cycle_is_caught_and_one_way_traffic_is_not(linked: Room) -> None:
    for _ in range(20):
        linked.send("a", "b", "more work")  # a flood, but no loop
    assert set(statuses(linked)) == {"queued"}
    for _ in range(10):
        linked.send("b", "c", "pass it on")
    for n in range(10):
        linked.send("c", "a", f"back to you {n}")
    found = [m for m in linked.store.history(500) if m["sender"] == "c"]
    assert [m["status"] for m in found] == ["queued"] * 9 + ["held"]
    assert "loop #1 @c → @a → @b → @c" in found[-1]["failure"]
    linked.send("a", "b", "again")  # every step of the cycle is held now
    linked.send("a", "c", "not a step of it")
    assert statuses(linked)[-2:] == ["held", "queued"]


def test_handovers_and_link_crossings_count_as_steps(linked: Room) -> None:
    for _ in range(10):
        linked.store.add_message(
            kind="link", sender="a", recipient="b", body="x", at=linked.clock()
        )
        linked.send_handover("b", "c", body="take it")
    for _ in range(9):
        assert linked.send_checked("c", "a", "ok")[1] is None
    message_id, hold = linked.send_checked("c", "a", "and again")
    assert hold == (1, ("c", "a", "b", "c"))
    assert linked.store.message(message_id)["status"] == "held"  # type: ignore[index]


def test_the_window_and_the_settings(linked: Room) -> None:
    from agent_room.room.loops import Loops

    for n in range(40):
        linked.clock.now += 7  # type: ignore[attr-defined]  # ~8.5 a minute each way
        linked.send("a" if n % 2 else "b", "b" if n % 2 else "a", "slow")
    assert set(statuses(linked)) == {"queued"}
    loops = Loops(linked)
    assert loops.configure(3, 30.0) == (3, 30.0)
    ping_pong(linked, 6, "a", "c")
    assert statuses(linked)[-6:] == ["queued"] * 5 + ["held"]
    loops.configure(0, 60.0)  # off
    ping_pong(linked, 20, "b", "c")
    assert statuses(linked)[-20:] == ["queued"] * 20


def test_the_operator_sees_releases_and_drops(linked: Room) -> None:
    from agent_room.room.loops import Loops

    ping_pong(linked, 24)
    loops = Loops(linked)
    [hold] = loops.holds()
    assert (hold["id"], hold["cycle"], hold["held"], hold["released_at"]) == (
        1,
        ["b", "a", "b"],
        5,
        None,
    )
    who = {s["name"]: s for s in linked.who()}
    assert (who["a"]["held"], who["b"]["held"], who["c"]["held"]) == (3, 2, 0)
    assert any(e.kind == "loop.held" for e in audit_events(linked))
    with pytest.raises(Refused, match="only the operator"):
        loops.release(1, caller="a")
    assert loops.release(1) == 5
    assert "held" not in statuses(linked)
    assert [m["body"] for m in linked.store.queued("b")][-2:] == ["reply 20", "reply 22"]
    ping_pong(linked, 19)  # the loop's steps count afresh after a release
    assert statuses(linked)[-19:] == ["queued"] * 19
    ping_pong(linked, 2)
    assert statuses(linked)[-1] == "held"
    assert loops.release(2, drop=True) == 1
    assert statuses(linked)[-1] == "cancelled"
    with pytest.raises(Refused, match="released already"):
        loops.release(2)
    assert [e.kind for e in audit_events(linked) if e.kind.startswith("loop.")] == [
        "loop.held",
        "loop.released",
        "loop.held",
        "loop.released",
    ]


def test_the_console_flow_shows_the_loop(linked: Room) -> None:
    from agent_room.room.snapshot import SnapshotReader

    ping_pong(linked, 22)
    snapshot = SnapshotReader(linked).read()
    assert [snapshot.session(n).delivery for n in "abc"] == [  # type: ignore[union-attr]
        "2 held (loop)",
        "1 held (loop)",
        "",
    ]
    [event] = [e for e in snapshot.flow if e.kind == "loop held"]
    assert (event.sender, event.recipient, event.status) == ("b", "a", "held")
    assert event.summary == "loop #1: @b → @a → @b held (agent-room loops)"


@pytest.mark.sqlite
def test_the_check_on_every_send_scans_no_history(linked: Room, room_home: Path) -> None:
    """The fast path's reads (and the cycle search's) keep to an index on any history."""
    import sqlite3

    from tests.store.test_query_plans import FULL_SCAN

    statements: list[str] = []
    linked.store.conn.set_trace_callback(statements.append)
    ping_pong(linked, 24)  # a busy loop: the search and the holds are asked too
    linked.send("a", "c", "one more")
    linked.send("c", "a", "and back")
    linked.send("b", "a", "held")
    linked.store.conn.set_trace_callback(None)
    asked = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert any("created_at >" in s for s in asked)
    plain = sqlite3.connect(room_home / "room.db")
    try:
        plans = [d for s in asked for *_ids, d in plain.execute(f"EXPLAIN QUERY PLAN {s}")]
    finally:
        plain.close()
    assert [d for d in plans if FULL_SCAN.match(d)] == []
    assert any("messages_sent" in d for d in plans)
    assert any("released_at >" in s for s in asked)  # the search ran


def test_a_held_step_cannot_go_around_by_a_link(linked: Room) -> None:
    from agent_room.room.links import Links

    ping_pong(linked, 20)
    with pytest.raises(Refused, match="@a -> @b is held by the loop breaker: loop #1"):
        Links(linked).open("a", "b", "then over a link")
    Links(linked).open("a", "c", "another step is free")
