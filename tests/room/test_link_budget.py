"""The turn budget cannot be reset by reopening (seed 001): a pair's crossings carry over
to its next link within the budget window; only the operator grants more."""

from __future__ import annotations

import pytest

from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.turn.core.errors import BadInput, Refused
from tests.room.test_links import link, ping_pong


def spend(room: Room, crossings: int) -> None:
    """Open a link from @a to @b and let ``crossings`` turns cross it."""
    Links(room).open("a", "b", "go")
    ping_pong(room, crossings)


def test_reopening_after_the_budget_is_spent_gives_nothing_more(linked: Room) -> None:
    links = Links(linked)
    links.configure(loop=(0, 60.0))
    spend(linked, 8)
    assert (link(linked)["state"], link(linked)["crossings"]) == ("closed", 8)
    for sender, recipient in (("a", "b"), ("b", "a")):  # either side, either direction
        with pytest.raises(Refused, match="turn budget between @a and @b is spent") as refused:
            links.open(sender, recipient, "one more round?")
        assert "agent-room link grant 1" in str(refused.value)
    assert len(links.links()) == 1
    assert links.open("a", "c", "hi c")[0]["budget"] == 8  # another pair is untouched


def test_what_is_left_carries_to_the_next_link(linked: Room) -> None:
    links = Links(linked)
    links.configure(loop=(0, 60.0))
    spend(linked, 3)
    links.close_with("a", "b", "enough for now")
    row, created, _ = links.open("b", "a", "back again")
    assert created
    assert (row["id"], row["budget"]) == (2, 5)


def test_the_window_passes_and_the_pair_starts_afresh(linked: Room) -> None:
    links = Links(linked)
    links.configure(loop=(0, 60.0), budget_window=600.0)
    assert links.settings().budget_window == 600.0
    spend(linked, 8)
    linked.clock.now += 601  # type: ignore[attr-defined]
    assert links.open("a", "b", "a new day")[0]["budget"] == 8


def test_only_the_operator_grants_more(linked: Room) -> None:
    links = Links(linked)
    links.configure(loop=(0, 60.0))
    spend(linked, 8)
    with pytest.raises(Refused, match="only the operator"):
        links.grant(1, 4, caller="a")
    with pytest.raises(BadInput, match="1 to 1000"):
        links.grant(1, 0, caller=None)
    links.grant(1, 4, caller=None)
    assert link(linked)["budget"] == 12
    row, _, _ = links.open("a", "b", "granted")
    assert row["budget"] == 4
    links.grant(2, 2, caller=None)  # a live link: it crosses more at once
    assert link(linked, 2)["budget"] == 6
    told = [m for m in linked.store.history(200) if "granted 2 more crossings" in m["body"]]
    assert sorted(m["recipient"] for m in told) == ["a", "b"]
    with pytest.raises(Refused, match="not the latest link between @a and @b"):
        links.grant(1, 1, caller=None)
    assert any(e.kind == "link.granted" for e in audit_events(linked))
