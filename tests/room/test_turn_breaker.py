"""The turn breaker on a real store: turns the room caused, per agent and per pair; past a
limit the room stops prompting, holds what would cross, and tells the operator once."""

from __future__ import annotations

from agent_room.adapters.processes import SystemProbe
from agent_room.core.attention import NotifyPolicy, NotifyState, alerts, decide
from agent_room.room.crossing import Crossings
from agent_room.room.links import Links
from agent_room.room.loops import Loops
from agent_room.room.service import Room
from agent_room.store import attention
from agent_room.turn.room.delivery import deliver_at_stop
from agent_room.turn.room.gate import prompt_refusal
from agent_room.workers.deliverer import Deliverer
from tests.fakes import IdleMux
from tests.room.conftest import register
from tests.room.test_links import turn


def caused(room: Room, name: str, cause: str, count: int, kind: str = "notice") -> None:
    """``count`` whole turns of ``name`` the room caused (``cause``: who)."""
    sid = f"s-{name}"
    for n in range(count):
        room.store.start_turn(
            sid, prompt_id=None, kind=kind, prompt=f"p{n}", at=room.clock(), cause=cause
        )
        room.store.stop_turn(sid, output=f"o{n}", failed=False, at=room.clock())


def test_a_person_and_the_rooms_turns_below_the_limit_pass(linked: Room) -> None:
    Loops(linked).configure_turns(3, 0, 300)
    caused(linked, "b", "room", 2)
    turn(linked, "b", "typed by a person", "done", kind="human")  # not the room's doing
    assert prompt_refusal(linked, "b", ["room"], linked.clock()) is None
    caused(linked, "a", "room", 2)  # another agent's turns and Stops: not @b's
    assert handed_over_at_stops(linked, "c", "a", 1) == [True]
    assert prompt_refusal(linked, "b", ["a"], linked.clock()) is None


def test_past_the_agent_limit_the_room_stops_prompting_and_says_so_once(linked: Room) -> None:
    Loops(linked).configure_turns(3, 0, 300)
    caused(linked, "b", "room", 3)
    why = prompt_refusal(linked, "b", ["room"], linked.clock())
    assert why is not None
    assert why.startswith("held by the turn breaker: loop #1, the room caused @b more than 3")
    assert "agent-room loops release 1" in why
    again = prompt_refusal(linked, "b", ["a"], linked.clock())  # held: no second hold
    assert again is not None
    assert "loop #1" in again
    [hold] = Loops(linked).holds()
    assert (hold["cycle"], hold["reason"]) == (["b"], "turns")
    assert prompt_refusal(linked, "a", ["room"], linked.clock()) is None  # only @b
    now = linked.clock()
    found = alerts(attention.facts(linked.store.conn, now), now=now, permission_after=30)
    [alert] = [a for a in found if a.kind == "loop"]
    assert "the room stopped prompting @b" in alert.text
    told, state = decide(found, NotifyState(), now=linked.clock(), policy=NotifyPolicy())
    assert [a.key for a in told] == ["loop:1"]
    assert decide(found, state, now=linked.clock(), policy=NotifyPolicy())[0] == []  # once


def test_a_held_agent_gets_no_nudge_and_no_stop_handover_until_released(
    linked: Room,
) -> None:
    register(linked, "d", pane="%4")
    Loops(linked).configure_turns(2, 0, 300)
    caused(linked, "d", "room", 2)
    linked.send("a", "d", "one more thing")
    mux = IdleMux()
    deliverer = Deliverer(linked, mux, SystemProbe())  # type: ignore[arg-type]
    assert deliverer.run_once()
    assert mux.typed == []  # nothing typed: the breaker holds @d
    assert "held by the turn breaker" in linked.store.notes()["d"]
    session = linked.store.holder("d")
    assert session is not None
    assert deliver_at_stop(linked, session) is None  # nor handed over at the turn's end
    assert [m["status"] for m in linked.store.queued("d")] == ["queued"]  # not lost
    Loops(linked).release(1)
    assert deliverer.run_once()
    [waiting] = linked.store.queued("d")
    assert mux.typed == [f"[agent-room] 1 new message from @a (#{waiting['id']})"]
    deliverer.release()


def test_past_the_pair_limit_their_messages_and_crossings_are_held(linked: Room) -> None:
    Loops(linked).configure_turns(0, 4, 300)
    Links(linked).configure(loop=(0, 60.0), budget=50)  # only the turn breaker here
    Links(linked).open("a", "b", "go")
    engine = Crossings(linked)
    caused(linked, "a", "b", 3, kind="crossing")
    caused(linked, "b", "a", 3, kind="crossing")
    caused(linked, "b", "c", 9, kind="message")  # work one way only: no ping-pong
    engine.run_once()  # all of them crossed: no hold yet
    why = prompt_refusal(linked, "b", ["a", "c"], linked.clock())
    assert why is not None
    assert "the room caused @a and @b more than 4 turns within 300s" in why
    [hold] = Loops(linked).holds()
    assert hold["cycle"] == ["a", "b", "a"]
    assert prompt_refusal(linked, "b", ["c"], linked.clock()) is None
    turn(linked, "b", "answer", "B's new point.")
    engine.run_once()
    [held] = [m for m in linked.store.history(50) if m["status"] == "held"]
    assert held["body"] == "[From @b] B's new point."
    assert "held by the turn breaker" in str(held["failure"])
    assert Loops(linked).holds()[0]["held"] == 1
    assert linked.send_checked("a", "b", "and another")[1] is not None  # held as well
    Loops(linked).release(1)
    assert linked.store.message(int(held["id"]))["status"] == "queued"  # type: ignore[index]


def test_the_console_shows_why_the_room_stopped_prompting(linked: Room) -> None:
    from agent_room.room.snapshot import SnapshotReader

    register(linked, "d", pane="%4")
    Loops(linked).configure_turns(2, 0, 300)
    caused(linked, "d", "room", 2)
    linked.send("a", "d", "one more thing")
    deliverer = Deliverer(linked, IdleMux(), SystemProbe())  # type: ignore[arg-type]
    assert deliverer.run_once()
    deliverer.release()
    snapshot = SnapshotReader(linked).read()
    row = snapshot.session("d")
    assert row is not None
    assert row.delivery.startswith("held by the turn breaker: loop #1")
    [event] = [e for e in snapshot.flow if e.kind == "loop held"]
    assert event.summary == (
        "loop #1: the room stopped prompting @d, 2 turns in 300.0s (agent-room loops)"
    )


def handed_over_at_stops(room: Room, sender: str, name: str, count: int) -> list[bool]:
    """``count`` messages of ``sender`` to ``name``, each offered at the ``Stop`` of a turn
    a person started (below the cap of ``Stop`` blocks in a row): whether each was handed
    over."""
    session = room.store.holder(name)
    assert session is not None
    handed = []
    for n in range(count):
        room.send(sender, name, f"point {n} of @{sender}")
        room.store.set_state(str(session["session_id"]), "busy", at=room.clock(), reset_blocks=True)
        handed.append(deliver_at_stop(room, session) is not None)
    return handed


def test_each_stop_that_hands_messages_over_counts(linked: Room) -> None:
    """A Stop hook that hands messages over keeps the turn going: one more model turn the
    room caused, though no prompt starts it."""
    Loops(linked).configure_turns(2, 0, 300)
    assert handed_over_at_stops(linked, "a", "b", 3) == [True, True, False]  # past the limit
    [hold] = Loops(linked).holds()
    assert hold["cycle"] == ["b"]
    assert [m["body"] for m in linked.store.queued("b")] == ["point 2 of @a"]


def test_a_pair_counts_only_the_turns_each_caused_the_other(linked: Room) -> None:
    Loops(linked).configure_turns(0, 4, 300)
    caused(linked, "a", "b", 2)
    caused(linked, "b", "a", 2)
    caused(linked, "a", "c", 5)  # others' doing: not the pair's
    caused(linked, "b", "room", 5)
    caused(linked, "c", "a", 5)  # @a's doing, but of another agent's turns
    assert prompt_refusal(linked, "b", ["a"], linked.clock()) is None  # twice min(3, 2)
    caused(linked, "a", "b", 1)
    why = prompt_refusal(linked, "b", ["a"], linked.clock())  # twice min(3, 3) > 4
    assert why is not None
    assert "the room caused @a and @b more than 4 turns" in why


def test_a_pair_counts_only_the_stops_that_handed_over_the_others_messages(
    linked: Room,
) -> None:
    Loops(linked).configure_turns(0, 4, 300)
    caused(linked, "a", "b", 3)
    assert handed_over_at_stops(linked, "c", "b", 3) == [True, True, True]  # not @a's
    assert handed_over_at_stops(linked, "a", "c", 3) == [True, True, True]  # not to @b
    assert handed_over_at_stops(linked, "a", "b", 3) == [True, True, False]
    [hold] = Loops(linked).holds()
    assert hold["cycle"] == ["a", "b", "a"]


def test_a_released_hold_counts_the_stops_afresh(linked: Room) -> None:
    Loops(linked).configure_turns(2, 0, 300)
    assert handed_over_at_stops(linked, "a", "b", 3) == [True, True, False]
    Loops(linked).release(1)  # hands the held message over at the next Stop
    assert handed_over_at_stops(linked, "c", "b", 3) == [True, True, False]
