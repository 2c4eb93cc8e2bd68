"""What needs the operator, the status line's format, and when the notifier speaks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.core.attention import (
    Alert,
    NotifyPolicy,
    NotifyState,
    RoomFacts,
    alerts,
    decide,
)
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.status_line import (
    DEFAULT_STATUS_FORMAT,
    StatusCounts,
    check_status_format,
    render_status,
)


def test_the_default_status_line_counts_handovers_dialogs_and_failures() -> None:
    line = render_status(DEFAULT_STATUS_FORMAT, StatusCounts(handovers=2, waiting=1, failed=0))
    assert line == "⚑2 ⏸1 ✗0"


def test_a_format_may_use_every_field_and_a_spec() -> None:
    text = check_status_format("{handovers:>2}|{waiting}|{failed}|{frozen}|{messages} {{x}}")
    assert render_status(text, StatusCounts(1, 2, 3, 4, 5)) == " 1|2|3|4|5 {x}"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{pending}", "unknown field {pending}"),
        ("{handovers.real}", "unknown field {handovers.real}"),
        ("{0}", "unknown field {0}"),
        ("{handovers!r}", "unknown field {handovers}"),
        ("{handovers", "invalid status format"),
        ("{handovers:q}", "invalid status format"),
    ],
)
def test_a_bad_format_is_one_clear_error(text: str, says: str) -> None:
    with pytest.raises(BadInput) as caught:
        check_status_format(text)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def _facts() -> RoomFacts:
    return RoomFacts(
        handovers=((41, "api", "web"),),
        waiting=(("mobile", "s-1", 1000.0), ("infra", "s-2", 1090.0)),
        failed=(("web", 2, 17),),
        frozen=((3, "lead", "worker", "loop breaker", 1050.0),),
        messages=((52, "api", "which schema?"),),
    )


def test_each_alert_names_the_agent_what_it_needs_and_how_to_act() -> None:
    found = alerts(_facts(), now=1100.0, permission_after=30.0)
    texts = {a.kind: a.text for a in found}
    assert texts["handover"] == (
        "@api hands over to @web: handover #41 waits for you"
        " (agent-room approve 41, or reject 41 --reason ...)"
    )
    assert texts["permission"] == (
        "@mobile has waited in a permission dialog for 100 s (agent-room enter mobile)"
    )
    assert texts["failed"] == (
        "@web: 2 messages could not be delivered (agent-room enter web, or agent-room who)"
    )
    assert (
        "link #3 @lead <-> @worker froze: loop breaker (agent-room link thaw 3" in texts["frozen"]
    )
    assert texts["message"] == "@api writes to you: which schema? (agent-room inbox --as operator)"
    # @infra has been in its dialog for 10 s only: not yet worth a notification
    assert [a.agent for a in found if a.kind == "permission"] == ["mobile"]


def _alert(key: str) -> Alert:
    return Alert(key, "handover", "api", key)


def test_an_alert_is_told_once_while_it_holds_and_again_when_it_comes_back() -> None:
    policy = NotifyPolicy(per_minute=10)
    told, state = decide([_alert("a")], NotifyState(), now=0.0, policy=policy)
    assert [a.key for a in told] == ["a"]
    told, state = decide([_alert("a"), _alert("b")], state, now=100.0, policy=policy)
    assert [a.key for a in told] == ["b"]
    told, state = decide([_alert("b")], state, now=200.0, policy=policy)  # a cleared
    assert told == []
    told, state = decide([_alert("a"), _alert("b")], state, now=300.0, policy=policy)
    assert [a.key for a in told] == ["a"]


def test_past_the_rate_limit_alerts_wait_their_turn_and_none_is_dropped() -> None:
    policy = NotifyPolicy(per_minute=2)
    found = [_alert(k) for k in "abcde"]
    told, state = decide(found, NotifyState(), now=0.0, policy=policy)
    assert [a.key for a in told] == ["a", "b"]
    told, state = decide(found, state, now=30.0, policy=policy)
    assert told == []  # the minute is not over
    told, state = decide(found, state, now=60.5, policy=policy)
    assert [a.key for a in told] == ["c", "d"]
    told, state = decide(found, state, now=121.0, policy=policy)
    assert [a.key for a in told] == ["e"]


@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=8), min_size=1, max_size=30),
    st.integers(min_value=1, max_value=5),
)
def test_never_more_than_the_limit_in_any_minute_never_twice_while_present(
    passes: list[list[str]], per_minute: int
) -> None:
    policy = NotifyPolicy(per_minute=per_minute)
    state, sent, active = NotifyState(), list[tuple[float, str]](), set[str]()
    for i, keys in enumerate(passes):
        now = i * 7.0
        active &= set(keys)  # told and present ever since
        found = [_alert(k) for k in dict.fromkeys(keys)]
        told, state = decide(found, state, now=now, policy=policy)
        for alert in told:
            assert alert.key in keys
            assert alert.key not in active
        active |= {a.key for a in told}
        sent.extend((now, a.key) for a in told)
        assert sum(1 for t, _k in sent if now - t < 60.0) <= per_minute
