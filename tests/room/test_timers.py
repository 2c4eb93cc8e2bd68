"""Timers in the room service, the ``who`` flags and the typed views for the console."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.core.models import LinkView, TimerView
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.room.views import link_views, timer_views
from agent_room.turn.core.errors import BadInput, Refused


def test_timers_fire_once_and_only_their_owner_cancels(linked: Room, room_home: Path) -> None:
    links = Links(linked)
    first = links.set_timer("a", "anchor", "5m", "back to task 3")
    second = links.set_timer("b", "wait", "90s", "answer from @a?")
    assert links.next_due() == second["due_at"]
    with pytest.raises(Refused, match="belongs to @b"):
        links.cancel_timer(second["id"], caller="a")
    linked.clock.now = first["due_at"] + 1  # type: ignore[attr-defined]
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    opened.clock = linked.clock
    other = Links(opened)
    assert sorted(links.fire_due() + other.fire_due()) == [first["id"], second["id"]]
    bodies = [m["body"] for m in linked.store.history(10)]
    assert bodies == ["WAIT: answer from @a?", "ANCHOR: back to task 3"]
    with pytest.raises(Refused, match="is fired"):
        links.cancel_timer(first["id"], caller=None)
    third = links.set_timer("a", "check", "1h", "read @b")
    links.cancel_timer(third["id"], caller=None)
    assert [t.state for t in timer_views(linked, pending_only=False)] == [
        "cancelled",
        "fired",
        "fired",
    ]
    assert all(isinstance(t, TimerView) for t in timer_views(linked, pending_only=False))
    opened.close()


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
    [view] = link_views(linked)
    assert isinstance(view, LinkView)
    assert (view.state.value, view.crossings_left, view.held) == ("open", 8, 0)
    assert view.model_dump()["crossings_left"] == 8


# -- timers are the agent's own breadcrumbs (seed 001) -----------------------------------


def _fire(room: Room, timer: dict[str, object]) -> str:
    """Fire ``timer`` and return the text its agent's model is shown, as a nudge hands it."""
    from agent_room.turn.room.delivery import receive

    room.clock.now = float(timer["due_at"]) + 1  # type: ignore[attr-defined,arg-type]
    Links(room).fire_due()
    ids = [int(m["id"]) for m in room.store.queued(str(timer["name"]))]
    text = receive(room, str(timer["name"]), ids)
    assert text is not None
    return text


def test_a_fired_anchor_sends_the_agent_back_to_its_own_work(linked: Room) -> None:
    anchor = Links(linked).set_timer("a", "anchor", "5m", "back to task 3")
    shown = _fire(linked, anchor)
    assert "ANCHOR: back to task 3" in shown
    assert "return to your own work" in shown
    assert "non-negotiable" in shown.lower()
    assert "present them to the user" not in shown.lower()
    assert "do not start new work" not in shown


def test_a_timer_among_messages_keeps_its_own_words_at_the_turn_boundary(linked: Room) -> None:
    from agent_room.turn.room.delivery import deliver_at_stop

    anchor = Links(linked).set_timer("a", "anchor", "5m", "back to task 3")
    linked.send("b", "a", "can you look at the schema?")
    linked.clock.now = float(anchor["due_at"]) + 1  # type: ignore[attr-defined]
    Links(linked).fire_due()
    shown = deliver_at_stop(linked, linked.require_member("a"))
    assert shown is not None
    timer_part, _, rest = shown.partition("can you look at the schema?")
    assert "return to your own work" in shown
    assert "ANCHOR: back to task 3" in rest  # the timer comes after the message
    assert "Present them to the user" in timer_part  # the peer's message keeps its rule


def test_a_fired_check_carries_the_peers_status(linked: Room) -> None:
    links = Links(linked)
    links.open("b", "c", "go")
    sid = "s-b"
    linked.store.start_turn(sid, prompt_id=None, kind="human", prompt="x", at=linked.clock())
    linked.store.stop_turn(
        sid, output="Stuck on the migration: FK fails.", failed=False, at=linked.clock()
    )
    linked.store.set_state(sid, "idle", at=linked.clock())
    check = links.set_timer("a", "check", "2m", "read @b status, help if stuck")
    shown = _fire(linked, check)
    assert "CHECK: read @b status, help if stuck" in shown
    assert "@b: idle" in shown
    assert "Stuck on the migration: FK fails." in shown
    assert "#1 to @c" in shown
    assert "do not message" in shown.lower()


def test_a_check_timer_must_name_a_peer(linked: Room) -> None:
    with pytest.raises(BadInput, match="name the agent to look at"):
        Links(linked).set_timer("a", "check", "2m", "see how things go")
    assert Links(linked).set_timer("a", "check", "2m", "read b's status")["intent"] == "check"


def test_answering_across_a_link_without_an_anchor_is_reminded_at_once(linked: Room) -> None:
    from agent_room.room.crossing import Crossings
    from tests.room.test_links import nudge_for, turn

    links = Links(linked)
    links.open("a", "b", "what does X cost?")
    links.set_timer("a", "anchor", "5m", "back to task 3")
    turn(linked, "b", nudge_for(linked, "b"), "X needs a new adapter.", kind="nudge")
    Crossings(linked).run_once()
    [reminder] = [m for m in linked.store.queued("b") if m["sender"] == "room"]
    assert "without a pending anchor" in reminder["body"]
    assert "agent-room timer anchor" in reminder["body"]
    turn(linked, "a", nudge_for(linked, "a"), "Then we drop X.", kind="nudge")
    Crossings(linked).run_once()  # a has its anchor: no reminder
    assert [m for m in linked.store.queued("a") if "anchor" in m["body"]] == []


def test_reminders_are_rationed_and_a_reminders_turn_earns_none(linked: Room) -> None:
    """The runaway this stops: on the native transport a reminder's turn crossed as an
    answer and earned another reminder. Now a reminder's turn (its nudge typed or sent
    through the socket) never crosses, and a second answer soon after is not reminded."""
    from agent_room.core.native import wrap
    from agent_room.room.crossing import Crossings
    from tests.room.test_links import nudge_for, turn

    links = Links(linked)
    links.open("a", "b", "what does X cost?")
    engine = Crossings(linked)

    def reminders() -> list[dict[str, object]]:
        return [m for m in linked.store.history(100) if "without a pending anchor" in m["body"]]

    turn(linked, "b", nudge_for(linked, "b"), "X needs a new adapter.", kind="crossing")
    engine.run_once()
    assert len(reminders()) == 1
    reminded = wrap(nudge_for(linked, "b"), from_socket="/tmp/cc-socks/1.sock")
    turn(linked, "b", reminded, "Setting an anchor; also, X is big.", kind="reminder")
    engine.run_once()
    assert len(reminders()) == 1  # its turn did not cross, so it earned nothing
    turn(linked, "a", nudge_for(linked, "a"), "Why is X big?", kind="crossing")
    engine.run_once()
    turn(linked, "b", nudge_for(linked, "b"), "Three modules change.", kind="crossing")
    engine.run_once()
    assert [m["recipient"] for m in reminders()] == ["b", "a"]  # b's second: within 10 min
    outcomes = [v["outcome"] for v in links.store.link_turns(1)]
    assert outcomes == ["crossed", "room", "crossed", "crossed"]
