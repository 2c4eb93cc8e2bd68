"""The loop breaker on cost: two agents messaging each other while their spending runs
fast are held like a loop, and count afresh once the operator releases them. And what a
handover cost its recipient."""

from __future__ import annotations

from agent_room.core.handover import HandoverFields
from agent_room.core.usage import Record, Tokens
from agent_room.core.usage_records import Client
from agent_room.room.loops import Loops
from agent_room.room.service import Room
from agent_room.room.usage_report import Reports
from agent_room.store import usage as store_usage
from agent_room.store.settings import SettingsStore
from agent_room.store.usage import Priced
from agent_room.turn.core.cost_rate import DEFAULT_LIMIT, LIMIT_KEY, WINDOW_KEY


def _spend(room: Room, name: str, dollars: float, key: str) -> None:
    record = Record(key, Client.CLAUDE, "m", Tokens(output=1000), room.clock())
    store_usage.save(room.store, f"s-{name}", [Priced(record, name, dollars)], at=room.clock())


def test_a_pair_spending_fast_while_messaging_each_other_is_held(linked: Room) -> None:
    _spend(linked, "a", DEFAULT_LIMIT * 0.6, "1")
    _spend(linked, "b", DEFAULT_LIMIT * 0.6, "2")
    _spend(linked, "c", DEFAULT_LIMIT * 5, "3")
    _, hold = linked.send_checked("a", "b", "one way only")
    assert hold is None  # no exchange yet: b never wrote to a
    _, hold = linked.send_checked("a", "c", "c spends, but alone")
    assert hold is None
    _, hold = linked.send_checked("b", "a", "an answer: now an exchange")
    assert hold is not None
    hold_id, cycle = hold
    assert cycle == ("b", "a", "b")
    _, again = linked.send_checked("a", "b", "held too: the same pair")
    assert again == hold
    assert Loops(linked).release(hold_id) == 2
    _, hold = linked.send_checked("a", "b", "after the release")
    assert hold is None  # what was spent before the release no longer counts
    _spend(linked, "a", DEFAULT_LIMIT, "4")
    _, hold = linked.send_checked("b", "a", "spending fast again")
    assert hold is not None
    assert hold[0] != hold_id


def test_the_cost_rate_is_a_setting_and_off_at_zero(linked: Room) -> None:
    SettingsStore(linked.store).save(
        {LIMIT_KEY: 0, WINDOW_KEY: 60}, at=linked.clock(), by="operator"
    )
    _spend(linked, "a", 1000.0, "1")
    linked.send_checked("b", "a", "x")
    assert linked.send_checked("a", "b", "y")[1] is None
    SettingsStore(linked.store).save(
        {LIMIT_KEY: 500, WINDOW_KEY: 60}, at=linked.clock(), by="operator"
    )
    assert linked.send_checked("a", "b", "z")[1] is not None


def test_a_handovers_cost_is_what_its_recipient_spent_until_it_was_applied(linked: Room) -> None:
    """From receiving it to the end of the turn it was received in; before and after,
    and another agent's spending, do not count."""
    fields = HandoverFields(what_changed="the API", what_to_do="update the client")
    handover = linked.send_handover("a", "b", fields=fields)
    linked.approve(handover)
    _spend(linked, "b", 1.0, "before")
    linked.store.start_turn("s-b", prompt_id=None, kind="prompt", prompt="go", at=linked.clock())
    linked.store.mark_delivered("b", [handover], at=linked.clock(), via="hook")
    _spend(linked, "b", 0.25, "during-1")
    _spend(linked, "c", 7.0, "someone else")
    _spend(linked, "b", 0.5, "during-2")
    linked.store.stop_turn("s-b", output="done", failed=False, at=linked.clock())
    _spend(linked, "b", 2.0, "after")
    (line,) = Reports(linked).summary("handover", 0).lines
    assert line.key == f"#{handover} @a -> @b"
    assert line.cost_usd == 0.75
    assert line.requests == 2
