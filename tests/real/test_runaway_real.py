"""Nothing runs away on a link between two real Claude Code agents, on every transport."""

from __future__ import annotations

import pytest

from agent_room.demo.model_api import Reply, Script
from tests.real.conftest import TURN, RealRoom
from tests.runaway import (
    ASK,
    TRANSPORTS,
    check_bounded,
    link_opened,
    origins,
    outcomes,
    record,
    set_transport,
    turn_holds,
    watch_link,
)

CHATTY = Reply("One more angle on the task list: it needs a due date too (n-17).")
"""What both models answer to anything: never an acknowledgement, always something new."""


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_link_between_two_unanchored_agents_stays_bounded(
    real: RealRoom, script: Script, transport: str
) -> None:
    script.add("LINK-OPEN", Reply("Asking.", bash=f'agent-room send @worker "{ASK}" --link'))
    script.add("", CHATTY)
    set_transport(real, transport)
    real.start("lead", "worker")
    real.type("lead", "LINK-OPEN: ask worker what the list needs")
    real.wait(lambda: link_opened(real), TURN, "lead", "worker")
    tally = watch_link(real, lambda: len(real.api.requests))
    record("claude", transport, tally)
    check_bounded(tally)


TIMERS = (
    "agent-room timer anchor 3s 'back to the parser (anc-1)'"
    " && agent-room timer check 4s 'read @lead status (chk-2)'"
    " && agent-room timer wait 5s 'did @lead answer (wt-3)'"
)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_timers_and_a_freeze_during_a_link_never_cross(
    real: RealRoom, script: Script, transport: str
) -> None:
    """The worker answers the link with an acknowledgement and sets its three timers;
    each timer's turn, and the turn the operator's freeze notice starts, answers at
    length: none of it crosses, on any transport, and then all is quiet."""
    script.add("LINK-OPEN", Reply("Asking.", bash=f'agent-room send @worker "{ASK}" --link'))
    script.add("q-91", Reply("Setting my timers.", bash=TIMERS))
    for mark in ("(anc-1)", "(chk-2)", "(wt-3)", "is frozen by the operator"):
        script.add(mark, CHATTY)
    script.add("", Reply("Noted."))  # anything else: only an acknowledgement
    script.add("", Reply("Noted."), after_tool=True)
    set_transport(real, transport)
    real.start("lead", "worker")
    real.type("lead", "LINK-OPEN: ask worker what the list needs")
    real.wait(lambda: link_opened(real), TURN, "lead", "worker")
    real.wait(lambda: origins(real, "worker").count("timer") == 3, TURN, "worker")
    real.wait(lambda: real.member("worker")["state"] == "idle", TURN, "worker")
    frozen = real.run("link", "freeze", "1")
    assert frozen.code == 0, frozen.err
    real.wait(lambda: "notice" in origins(real, "lead"), TURN, "lead")
    tally = watch_link(real, lambda: len(real.api.requests))
    record("claude", f"{transport} timers+freeze", tally)
    check_bounded(tally)
    assert (tally.crossed, tally.held, tally.state) == (0, 0, "frozen"), tally
    assert origins(real, "worker").count("notice") >= 1  # the freeze (the rules came with q-91)
    skipped = outcomes(real)
    assert skipped.count("room") >= 5, skipped  # three timers, two freeze notices
    assert "crossed" not in skipped


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_two_agents_answering_each_others_messages_trip_the_turn_breaker(
    real: RealRoom, script: Script, transport: str
) -> None:
    """No link: each answers every message of the other with one of its own. The turn
    breaker (16 turns of the pair within 300 s) stops the room prompting them, and the
    operator hears of it once."""
    for me, peer in (("lead", "worker"), ("worker", "lead")):  # each answers with one more
        answer = f'agent-room send @{peer} "one more point (to-{peer})"'
        script.add(f"(to-{me})", Reply("Answering.", bash=answer))
    script.add("PING", Reply("Starting.", bash='agent-room send @worker "start (to-worker)"'))
    set_transport(real, transport)
    real.start("lead", "worker")
    real.type("lead", "PING: start the exchange with worker")
    real.wait(lambda: turn_holds(real), TURN * 2, "lead", "worker")
    tally = watch_link(real, lambda: len(real.api.requests), stops=False)
    record("claude", f"{transport} ping-pong", tally)
    assert tally.requests_late == 0, tally
    assert tally.frozen_notices == 1, tally  # the operator is told once
    [hold] = turn_holds(real)
    assert set(hold["cycle"]) == {"lead", "worker"}
    assert "turns: the room stopped prompting" in real.run("loops").out
    assert any("held by the turn breaker" in str(m.get("delivery")) for m in real.who().values())
