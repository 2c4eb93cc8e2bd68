"""The collaboration ledger over a real room: outcomes, applied, filters, statistics."""

from __future__ import annotations

from agent_room.core.handover import HandoverFields
from agent_room.room.ledger import Ledger
from agent_room.room.service import Room


def _hand(room: Room, sender: str, recipient: str) -> int:
    fields = HandoverFields(what_changed="the API", what_to_do="update the client")
    return room.send_handover(sender, recipient, fields=fields)


def _take_turn(room: Room, session_id: str) -> None:
    room.store.start_turn(session_id, prompt_id=None, kind="prompt", prompt="go", at=room.clock())
    room.store.stop_turn(session_id, output="done", failed=False, at=room.clock())


def test_outcomes_through_applied(linked: Room) -> None:
    applied = _hand(linked, "a", "b")
    approved = _hand(linked, "a", "c")
    rejected = _hand(linked, "b", "a")
    pending = _hand(linked, "c", "a")
    linked.approve(applied)
    linked.approve(approved)
    linked.reject(rejected, "not now")
    _take_turn(linked, "s-b")  # a turn before the handover reached b does not apply it
    linked.store.mark_delivered("b", [applied], at=linked.clock(), via="hook")
    linked.store.mark_delivered("c", [approved], at=linked.clock(), via="hook")
    assert [i.outcome for i in Ledger(linked).history()] == [
        "approved",
        "approved",
        "rejected",
        "pending",
    ]
    _take_turn(linked, "s-b")
    items = {i.id: i for i in Ledger(linked).history()}
    assert items[applied].outcome == "applied"
    assert items[applied].applied_at is not None
    assert items[applied].applied_at > items[applied].received_at  # type: ignore[operator]
    assert items[approved].outcome == "approved"
    assert items[rejected].reason == "not now"
    assert items[pending].decided_at is None


def test_filters_by_agent_and_time(linked: Room) -> None:
    first = _hand(linked, "a", "b")
    linked.clock.now += 3600  # type: ignore[attr-defined]
    second = _hand(linked, "b", "c")
    assert [i.id for i in Ledger(linked).history(agent="a")] == [first]
    assert [i.id for i in Ledger(linked).history(agent="c")] == [second]
    assert [i.id for i in Ledger(linked).history(within=60)] == [second]


def test_stats_per_pair_and_agent(linked: Room) -> None:
    for _ in range(3):
        linked.approve(_hand(linked, "a", "b"))
    linked.reject(_hand(linked, "a", "b"), "no")
    _hand(linked, "b", "c")
    summary = Ledger(linked).stats()
    pair = summary["pairs"]["a -> b"]
    assert pair["total"] == 4
    assert pair["approved"] == 3
    assert pair["rejected"] == 1
    assert pair["approval_rate"] == 0.75
    assert pair["median_to_decision"] is not None
    assert pair["median_to_applied"] is None
    assert summary["pairs"]["b -> c"]["pending"] == 1
    assert summary["pairs"]["b -> c"]["approval_rate"] is None
    assert summary["agents"]["b"]["total"] == 5
    assert summary["agents"]["a"]["total"] == 4
