"""Links and timers in the room service, on a real SQLite store: lifecycle, crossings
(exactly once, even with injectors racing), the checkpoint filter, budget, loop breaker,
severing and resume, timers and the ``who`` flags."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from agent_room.room.crossing import Crossings
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.turn.core.errors import Refused
from tests.room.conftest import register


def turn(room: Room, name: str, prompt: str, output: str | None, *, kind: str = "message") -> None:
    """One whole turn of ``name``: prompt, Stop with ``output``, idle again (by default a
    turn that answered a peer's message: the only kind that crosses)."""
    sid = f"s-{name}"
    room.store.set_state(sid, "busy", at=room.clock())
    room.store.start_turn(sid, prompt_id=None, kind=kind, prompt=prompt, at=room.clock())
    room.store.stop_turn(sid, output=output, failed=False, at=room.clock())
    room.store.set_state(sid, "idle", at=room.clock())


def nudge_for(room: Room, name: str) -> str:
    """The nudge the deliverer would type for ``name``'s queued messages."""
    from agent_room.turn.core.prompts import nudge_text

    queued = room.store.queued(name)
    ids = [int(m["id"]) for m in queued]
    room.store.mark_delivered(name, ids, at=room.clock(), via="nudge")
    return nudge_text([m["sender"] for m in queued], ids)


def crossed(room: Room, sender: str | None = None) -> list[str]:
    return [
        m["body"]
        for m in room.store.history(500)
        if m["kind"] == "link" and (sender is None or m["sender"] == sender)
    ]


def link(room: Room, link_id: int = 1) -> dict[str, Any]:
    row = Links(room).store.link(link_id)
    assert row is not None
    return row


# -- opening ----------------------------------------------------------------------------


def test_opening_sends_the_rules_to_both_once_and_a_second_link_reuses_it(linked: Room) -> None:
    links = Links(linked)
    row, created, mid = links.open("a", "b", "what does X cost?")
    assert created
    assert (row["initiator"], row["responder"], row["budget"]) == ("a", "b", 8)
    message = linked.store.message(mid)
    assert message is not None
    assert (message["body"], message["link_id"]) == ("what does X cost?", row["id"])
    again, created_again, _ = links.open("a", "b", "and Y?")
    reverse, created_reverse, _ = links.open("b", "a", "from b")
    assert (again["id"], reverse["id"], created_again, created_reverse) == (1, 1, False, False)
    rules = [m for m in linked.store.history(50) if "Rules on a link" in m["body"]]
    assert sorted(m["recipient"] for m in rules) == ["a", "b"]
    assert "only you can close it" in next(m["body"] for m in rules if m["recipient"] == "a")
    other, created_other, _ = links.open("a", "c", "hi c")  # several peers at once
    assert (other["id"], created_other) == (2, True)


def test_a_link_needs_two_running_sessions(linked: Room) -> None:
    linked.join("byhand")
    with pytest.raises(Refused, match="no running agent session"):
        Links(linked).open("a", "byhand", "hi")
    linked.store.set_state("s-c", "ended", at=linked.clock())
    with pytest.raises(Refused, match="has ended"):
        Links(linked).open("a", "c", "hi")
    assert Links(linked).links() == []


# -- crossing ---------------------------------------------------------------------------


def test_outputs_cross_framed_both_ways_and_the_opening_turn_does_not(linked: Room) -> None:
    linked.store.start_turn("s-a", prompt_id=None, kind="human", prompt="ask b", at=1.0)
    Links(linked).open("a", "b", "what does X cost?")  # from inside A's turn
    linked.store.stop_turn("s-a", output="I asked @b.", failed=False, at=linked.clock())
    engine = Crossings(linked)
    turn(linked, "b", nudge_for(linked, "b"), "X needs a new adapter.", kind="nudge")
    engine.run_once()
    assert crossed(linked) == ["[From @b] X needs a new adapter."]
    turn(linked, "a", nudge_for(linked, "a"), "Then we drop X.", kind="nudge")
    engine.run_once()
    assert crossed(linked, "a") == ["[From @a] Then we drop X."]
    assert link(linked)["crossings"] == 2


def test_racing_injectors_cross_each_turn_exactly_once(linked: Room, room_home: Path) -> None:
    Links(linked).open("a", "b", "go")
    for n in range(20):
        turn(linked, "a" if n % 2 else "b", f"work {n}", f"result {n}")
    Links(linked).configure(loop=(0, 60.0), budget=50)  # only applies to new links
    engines = [Crossings(Room.open({"AGENT_ROOM_HOME": str(room_home)})) for _ in range(4)]
    barrier = threading.Barrier(len(engines))

    def run(engine: Crossings) -> None:
        barrier.wait()
        for _ in range(5):
            engine.run_once()

    threads = [threading.Thread(target=run, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    verdicts = Links(linked).store.link_turns(1)
    assert len(verdicts) == len({v["turn_id"] for v in verdicts}) == 20
    bodies = crossed(linked)
    assert len(bodies) == len(set(bodies)) == 8  # the budget of the link as it opened
    assert link(linked)["state"] == "closed"
    for engine in engines:
        engine.room.close()


def test_checkpoint_turns_do_not_cross_and_spend_nothing(linked: Room) -> None:
    Links(linked).open("a", "b", "go")
    engine = Crossings(linked)
    turn(
        linked, "b", "[agent-room checkpoint] anything to save?", "Saved notes.", kind="checkpoint"
    )
    turn(linked, "b", "ANCHOR: back to the parser", "Parser done.", kind="checkpoint")
    engine.run_once()
    assert crossed(linked) == []
    assert (link(linked)["state"], link(linked)["crossings"]) == ("open", 0)
    outcomes = [v["outcome"] for v in Links(linked).store.link_turns(1)]
    assert outcomes == ["checkpoint", "checkpoint"]


def test_configured_checkpoint_patterns_are_obeyed(linked: Room) -> None:
    Links(linked).configure(patterns=["^HEARTBEAT"])
    Links(linked).open("a", "b", "go")
    turn(linked, "b", "HEARTBEAT: on track?", "Yes, on task 3.")
    turn(linked, "b", "[agent-room checkpoint] x", "Now this one crosses.")
    Crossings(linked).run_once()
    assert crossed(linked) == ["[From @b] Now this one crosses."]


def test_empty_ack_and_room_only_turns_do_not_cross(linked: Room) -> None:
    links = Links(linked)
    links.open("a", "b", "go")
    nudge_for(linked, "b")
    turn(linked, "b", "fix it", "")
    turn(linked, "b", "fix it", "Thanks, got it 👍")
    timer = links.set_timer("b", "anchor", "1s", "back to work")
    linked.clock.now = timer["due_at"] + 1  # type: ignore[attr-defined]
    links.fire_due()
    turn(linked, "b", nudge_for(linked, "b"), "Back on the parser.", kind="nudge")
    Crossings(linked).run_once()
    assert crossed(linked) == []
    outcomes = [v["outcome"] for v in links.store.link_turns(1)]
    assert outcomes == ["empty", "ack", "room"]


def test_an_answer_to_one_link_does_not_cross_the_other(linked: Room) -> None:
    links = Links(linked)
    links.open("a", "b", "b?")
    links.open("a", "c", "c?")
    nudge_for(linked, "a")  # the rules
    turn(linked, "b", nudge_for(linked, "b"), "B's view.", kind="nudge")
    Crossings(linked).run_once()
    turn(linked, "a", nudge_for(linked, "a"), "Noted B: the cache goes.", kind="nudge")
    turn(linked, "a", "summarise", "Summary for everyone.")
    Crossings(linked).run_once()
    to_c = [
        m["body"]
        for m in linked.store.history(100)
        if m["kind"] == "link" and m["recipient"] == "c"
    ]
    to_b = [
        m["body"]
        for m in linked.store.history(100)
        if m["kind"] == "link" and m["recipient"] == "b"
    ]
    assert to_b == ["[From @a] Noted B: the cache goes.", "[From @a] Summary for everyone."]
    assert to_c == ["[From @a] Summary for everyone."]


def test_a_turn_continued_by_its_stop_hook_answers_what_was_handed_over(linked: Room) -> None:
    Links(linked).open("a", "b", "go")
    engine = Crossings(linked)
    rules_nudge = nudge_for(linked, "a")
    linked.store.set_state("s-a", "busy", at=linked.clock())
    linked.store.start_turn(
        "s-a", prompt_id=None, kind="nudge", prompt=rules_nudge, at=linked.clock()
    )
    turn(linked, "b", nudge_for(linked, "b"), "B's finding.", kind="nudge")
    engine.run_once()  # B's output crosses while A is busy
    linked.store.stop_turn("s-a", output="Rules noted.", failed=False, at=linked.clock())
    queued = [int(m["id"]) for m in linked.store.queued("a")]
    linked.store.mark_delivered("a", queued, at=linked.clock(), via="stop")  # the Stop block
    engine.run_once()
    assert crossed(linked, "a") == []  # still busy: the turn goes on
    linked.store.stop_turn("s-a", output="A's answer to B.", failed=False, at=linked.clock())
    linked.store.set_state("s-a", "idle", at=linked.clock())
    engine.run_once()
    assert crossed(linked, "a") == ["[From @a] A's answer to B."]


def test_the_openers_turn_goes_on_privately_after_the_rules(linked: Room) -> None:
    linked.store.set_state("s-a", "busy", at=linked.clock())
    linked.store.start_turn("s-a", prompt_id=None, kind="human", prompt="ask b", at=1.0)
    Links(linked).open("a", "b", "what does X cost?")
    linked.store.stop_turn("s-a", output="I asked @b.", failed=False, at=linked.clock())
    rules = [int(m["id"]) for m in linked.store.queued("a")]
    linked.store.mark_delivered("a", rules, at=linked.clock(), via="stop")  # Stop block
    linked.store.stop_turn("s-a", output="Noted the link rules.", failed=False, at=linked.clock())
    linked.store.set_state("s-a", "idle", at=linked.clock())
    Crossings(linked).run_once()
    assert crossed(linked) == []
    assert [v["outcome"] for v in Links(linked).store.link_turns(1)] == ["earlier"]


def test_a_busy_responder_answers_at_its_turn_boundary_and_it_crosses(linked: Room) -> None:
    linked.store.set_state("s-b", "busy", at=linked.clock())
    linked.store.start_turn("s-b", prompt_id=None, kind="human", prompt="own work", at=1.0)
    Links(linked).open("a", "b", "what does X cost?")
    linked.store.stop_turn("s-b", output="Own work done.", failed=False, at=linked.clock())
    waiting = [int(m["id"]) for m in linked.store.queued("b")]
    linked.store.mark_delivered("b", waiting, at=linked.clock(), via="stop")  # rules + question
    linked.store.stop_turn("s-b", output="X costs 3 sessions.", failed=False, at=linked.clock())
    linked.store.set_state("s-b", "idle", at=linked.clock())
    Crossings(linked).run_once()
    assert crossed(linked) == ["[From @b] X costs 3 sessions."]


# -- budget and loop breaker ------------------------------------------------------------


def ping_pong(room: Room, rounds: int) -> None:
    engine = Crossings(room)
    for n in range(rounds):
        turn(room, "b" if n % 2 == 0 else "a", f"turn {n}", f"point {n}")
        engine.run_once()


def test_the_budget_closes_the_link_and_everyone_is_told(linked: Room) -> None:
    Links(linked).configure(budget=3, loop=(0, 60.0))
    Links(linked).open("a", "b", "go")
    ping_pong(linked, 5)
    assert crossed(linked) == ["[From @b] point 0", "[From @a] point 1", "[From @b] point 2"]
    row = link(linked)
    assert (row["state"], row["crossings"], row["close_reason"]) == (
        "closed",
        3,
        "turn budget spent",
    )
    notices = [m for m in linked.store.history(100) if "crossings are spent" in m["body"]]
    assert sorted(m["recipient"] for m in notices) == ["a", "b"]
    assert [e.data["reason"] for e in audit_events(linked) if e.kind == "link.closed"] == [
        "turn budget spent"
    ]
    with pytest.raises(Refused, match="closed"):
        Links(linked).thaw(1, caller=None)  # and it is never reset


def test_the_loop_breaker_freezes_holds_and_thaw_releases(linked: Room) -> None:
    links = Links(linked)
    links.configure(loop=(2, 60.0))
    links.open("a", "b", "go")
    ping_pong(linked, 4)
    row = link(linked)
    assert (row["state"], row["crossings"], row["freeze_reason"]) == ("frozen", 2, "loop breaker")
    held = [m for m in linked.store.history(100) if m["kind"] == "link" and m["status"] == "held"]
    assert [m["body"] for m in held] == ["[From @b] point 2", "[From @a] point 3"]
    assert all(m["id"] not in {u["id"] for u in linked.store.unread("a")} for m in held)
    who = {s["name"]: s for s in linked.who()}
    assert who["a"]["links"][0]["state"] == "frozen"
    assert any(e.kind == "link.frozen" for e in audit_events(linked))
    with pytest.raises(Refused, match="only the operator"):
        links.thaw(1, caller="a")
    links.thaw(1, caller=None)
    assert [
        m["status"] for m in linked.store.history(100) if m["id"] in {h["id"] for h in held}
    ] == [
        "queued",
        "queued",
    ]
    assert (link(linked)["state"], link(linked)["crossings"]) == ("open", 4)


def test_closing_a_frozen_link_keeps_what_was_held_in_the_history(linked: Room) -> None:
    links = Links(linked)
    links.open("a", "b", "go")
    links.freeze(1, caller="b")  # either side may freeze
    ping_pong(linked, 1)
    links.close(1, caller=None)
    [held] = [m for m in linked.store.history(100) if m["kind"] == "link"]
    assert (held["status"], held["failure"]) == (
        "cancelled",
        "not delivered: closed by the operator",
    )


# -- closing, severing, resume ----------------------------------------------------------


def test_only_the_initiator_closes_with_words(linked: Room) -> None:
    links = Links(linked)
    links.open("a", "b", "go")
    with pytest.raises(Refused, match="only the initiator @a can close link #1"):
        links.close_with("b", "a", "bye")
    with pytest.raises(Refused, match="only the initiator"):
        links.close(1, caller="b")
    link_id, mid = links.close_with("a", "b", "Thanks, synthesis done.")
    assert link_id == 1
    assert link(linked)["close_reason"] == "closed by @a"
    assert linked.store.message(mid)["body"] == "Thanks, synthesis done."  # type: ignore[index]
    assert any("is closed by @a" in m["body"] for m in linked.store.unread("b"))
    with pytest.raises(Refused, match="no open link"):
        links.close_with("a", "b", "again")
    turn(linked, "b", "x", "Too late.")
    Crossings(linked).run_once()
    assert crossed(linked) == []


def test_the_end_of_a_session_severs_after_its_last_words_cross(linked: Room) -> None:
    Links(linked).open("a", "b", "go")
    engine = Crossings(linked)
    turn(linked, "b", "last", "My last finding.")
    linked.store.set_state("s-b", "ended", at=linked.clock())
    turn(linked, "a", "meanwhile", "A goes on.")
    engine.run_once()
    assert crossed(linked) == ["[From @b] My last finding."]  # A waits: B may resume
    assert link(linked)["state"] == "open"
    linked.clock.now += 31  # type: ignore[attr-defined]  # the grace is over
    engine.run_once()
    row = link(linked)
    assert (row["state"], row["close_reason"]) == (
        "closed",
        "severed: the responder's session ended",
    )
    assert [m["recipient"] for m in linked.store.history(100) if "is severed" in m["body"]] == ["a"]
    assert crossed(linked) == ["[From @b] My last finding."]


def test_a_resumed_session_keeps_its_link(linked: Room) -> None:
    Links(linked).open("a", "b", "go")
    engine = Crossings(linked)
    linked.store.set_state("s-b", "ended", at=linked.clock())  # exit, then claude --resume
    turn(linked, "a", "meanwhile", "A's point while B was away.")
    engine.run_once()
    register(linked, "b", pane="%9", pid=4242)  # SessionStart source=resume: same session id
    linked.clock.now += 60  # type: ignore[attr-defined]
    engine.run_once()
    turn(linked, "b", "again", "Back, with the answer.")
    engine.run_once()
    assert link(linked)["state"] == "open"
    assert crossed(linked) == [
        "[From @a] A's point while B was away.",
        "[From @b] Back, with the answer.",
    ]


def test_leaving_the_room_severs(linked: Room) -> None:
    Links(linked).open("a", "b", "go")
    linked.leave("a")
    Crossings(linked).run_once()
    assert link(linked)["close_reason"] == "severed: the initiator left the room"
