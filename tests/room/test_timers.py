"""Timers in the room service, the ``who`` flags and the typed views for the console."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.core.errors import Refused
from agent_room.core.models import LinkView, TimerView
from agent_room.room import Room
from agent_room.room.links import Links


def test_timers_fire_once_and_only_their_owner_cancels(linked: Room, room_home: Path) -> None:
    links = Links(linked)
    first = links.set_timer("a", "anchor", "5m", "back to task 3")
    second = links.set_timer("b", "wait", "90s", "answer from @a?")
    assert links.next_due() == second["due_at"]
    with pytest.raises(Refused, match="belongs to @b"):
        links.cancel_timer(second["id"], caller="a")
    linked.clock.now = first["due_at"] + 1  # type: ignore[attr-defined]
    other = Links(Room.open({"AGENT_ROOM_HOME": str(room_home)}))
    other.room.clock = linked.clock
    assert sorted(links.fire_due() + other.fire_due()) == [first["id"], second["id"]]
    bodies = [m["body"] for m in linked.store.history(10)]
    assert bodies == ["WAIT: answer from @a?", "ANCHOR: back to task 3"]
    with pytest.raises(Refused, match="is fired"):
        links.cancel_timer(first["id"], caller=None)
    third = links.set_timer("a", "check", "1h", "read @b")
    links.cancel_timer(third["id"], caller=None)
    assert [t.state for t in linked.timers(pending_only=False)] == ["cancelled", "fired", "fired"]
    assert all(isinstance(t, TimerView) for t in linked.timers(pending_only=False))
    other.room.close()


def test_who_flags_linked_agents_without_an_anchor(linked: Room) -> None:
    links = Links(linked)
    links.open("a", "b", "go")
    links.set_timer("a", "anchor", "5m", "task 3")
    links.set_timer("b", "check", "5m", "look at a")
    who = {s["name"]: s for s in linked.who()}
    assert who["a"]["links"] == [
        {"id": 1, "peer": "b", "role": "initiator", "state": "open", "crossings_left": 8}
    ]
    assert who["b"]["links"][0]["role"] == "responder"
    assert (who["a"]["unanchored"], who["b"]["unanchored"], who["c"]["unanchored"]) == (
        False,
        True,
        False,
    )


def test_the_console_gets_typed_links(linked: Room) -> None:
    Links(linked).open("a", "b", "go")
    [view] = linked.links()
    assert isinstance(view, LinkView)
    assert (view.state.value, view.crossings_left, view.held) == ("open", 8, 0)
    assert view.model_dump()["crossings_left"] == 8
