"""Timers with intent: durations, texts, the fired text, the watcher's wait, anchoring."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.timers import (
    Intent,
    check_text,
    fired_text,
    format_duration,
    next_due,
    parse_duration,
    parse_intent,
    unanchored,
    wait_for,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("5m", 300), ("1h", 3600), ("1h30m", 5400), ("2d", 172800), ("45", 45),
     ("1.5m", 90), (" 10S ", 10), ("5", 5)],  # a bare number is seconds
)  # fmt: skip
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "m", "5x", "-5m", "0s", "8d", "5 m", "1h-2m", "abc"])
def test_bad_durations_say_how(text: str) -> None:
    with pytest.raises(BadInput, match="duration"):
        parse_duration(text)


@given(st.integers(min_value=1, max_value=7 * 86400))
def test_format_and_parse_round_trip(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


def test_intents_and_their_text() -> None:
    assert parse_intent("ANCHOR") is Intent.ANCHOR
    with pytest.raises(BadInput, match="anchor, check or wait"):
        parse_intent("remind")
    assert fired_text(Intent.ANCHOR, "return to task 3") == "ANCHOR: return to task 3"
    assert fired_text("check", "read @b") == "CHECK: read @b"
    assert fired_text("wait", "answer from @b?") == "WAIT: answer from @b?"


def test_timer_text_is_checked() -> None:
    assert check_text("  back to work ") == "back to work"
    for bad in ("", "   ", "x" * 2001, "bell\x07"):
        with pytest.raises(BadInput):
            check_text(bad)


def test_the_watcher_wakes_in_time_for_the_next_timer() -> None:
    assert next_due([]) is None
    assert next_due([30.0, 10.0, 20.0]) == 10.0
    assert wait_for(None, 100.0, 0.5) == 0.5
    assert wait_for(100.2, 100.0, 0.5) == pytest.approx(0.2)
    assert wait_for(99.0, 100.0, 0.5) == 0.0  # overdue: at once


@given(st.floats(0, 1e6), st.floats(0, 1e6), st.floats(0.01, 10))
def test_wait_is_never_negative_nor_past_the_ceiling(
    due: float, now: float, ceiling: float
) -> None:
    wait = wait_for(due, now, ceiling)
    assert 0.0 <= wait <= ceiling
    assert now + wait <= max(due, now) + 1e-6 or wait == ceiling


def test_linked_agents_without_an_anchor_are_flagged() -> None:
    assert unanchored(["a", "b"], ["b", "c"]) == {"a"}
    assert unanchored([], ["a"]) == set()


def test_a_fired_timer_is_recognised_only_from_the_room() -> None:
    from agent_room.turn.core.timers import fired_intent

    room = {"kind": "system", "sender": "room", "body": "CHECK: read @b"}
    assert fired_intent(room) is Intent.CHECK
    assert fired_intent({**room, "sender": "a"}) is None  # an agent cannot fake one
    assert fired_intent({**room, "kind": "chat"}) is None
    assert fired_intent({**room, "body": "[agent-room] Link #1 ..."}) is None


def test_breadcrumbs_speak_of_the_agents_own_work() -> None:
    from agent_room.turn.core.timers import breadcrumb_guidance

    anchor = breadcrumb_guidance([Intent.ANCHOR])
    assert anchor.startswith("Your own timer fired. ANCHOR is your own breadcrumb")
    assert "Non-negotiable" in anchor
    both = breadcrumb_guidance([Intent.WAIT, Intent.CHECK, Intent.WAIT])
    assert both.index("CHECK is") < both.index("WAIT is")
    assert both.startswith("Your own timers fired.")


def test_the_peers_a_check_names() -> None:
    from agent_room.turn.core.timers import named_peers

    members = ["a", "backend", "worker-feasibility"]
    assert named_peers("read @backend and @zed, help if stuck", "a", members) == ["backend"]
    assert named_peers("read worker-feasibility status", "a", members) == ["worker-feasibility"]
    assert named_peers("read @a's status", "a", members) == []  # not yourself
    assert named_peers("look around", "a", members) == []


def test_a_peers_status() -> None:
    from agent_room.turn.core.timers import STATUS_OUTPUT, peer_status

    shown = peer_status(
        "b", now=1000, state="idle", since=880, output="Done.", output_at=940, links="#1 to @c"
    )
    assert shown == "@b: idle for 2m\nlinks: #1 to @c\nlast output (1m ago):\nDone."
    long = peer_status(
        "b", now=1, state="busy", since=None, output="x" * 5000, output_at=None, links=""
    )
    assert "links: none" in long
    assert long.endswith("[...] (agent-room peek for more)")
    assert long.count("x") == STATUS_OUTPUT
    gone = peer_status("b", now=1, state=None, since=None, output=None, output_at=None, links="")
    assert gone == "@b: not in the room any more."
