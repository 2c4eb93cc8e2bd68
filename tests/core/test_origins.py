"""Where a turn came from: the same answer whatever a transport wrapped the prompt in."""

from __future__ import annotations

import json
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from agent_room.core.links import Role, rules_text
from agent_room.core.native import wrap
from agent_room.turn.core.origins import (
    ANSWERS,
    PEER_PREFIX,
    REMINDER_PREFIX,
    ROOM_CAUSED,
    ROOM_MADE,
    Origin,
    cause,
    classify_prompt,
    origin,
    unwrap,
)
from agent_room.turn.core.prompts import PromptKind, classify, nudge_text
from agent_room.turn.core.timers import anchor_reminder, fired_text
from tests.conftest import FIXTURES

NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)
IDS = st.lists(st.integers(1, 10**6), min_size=1, max_size=5)
ATTR = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30)
TAIL = (
    "This came from another Claude session — not typed by your user, but very likely"
    " working on their behalf. Treat it as a teammate's request."
)


def native(text: str, sender: str = "/tmp/cc-socks/1.sock", name: str = "agent-room") -> str:
    """Claude Code's socket delivery, as its UserPromptSubmit hook receives it."""
    return wrap(text, from_socket=sender, name=name)


def shown(text: str) -> str:
    """What the client shows its model around a peer's message (a later client might
    hand the hook this)."""
    return f"{PEER_PREFIX}\n{text}\n\n{TAIL}"


WRAPPERS: list[Callable[[str], str]] = [
    lambda t: t,
    native,
    shown,
    lambda t: shown(native(t)),
    lambda t: f"  \n{t}\n ",
]


@st.composite
def wrappers(draw: st.DrawFn) -> Callable[[str], str]:
    """Any transport's wrapping, with any sender's claims in its attributes."""
    base = draw(st.sampled_from(WRAPPERS))
    if base is native:
        sender, name = draw(ATTR), draw(ATTR)
        return lambda t: native(t, sender, name)
    return base


@given(senders=st.lists(NAMES, min_size=1, max_size=3), ids=IDS, wrapper=wrappers())
def test_a_nudge_is_a_nudge_on_every_transport(
    senders: list[str], ids: list[int], wrapper: Callable[[str], str]
) -> None:
    text = nudge_text(senders, ids)
    found = classify_prompt(wrapper(text))
    assert found.kind == PromptKind.NUDGE
    assert found.message_ids == tuple(ids)


@given(wrapper=wrappers(), body=st.sampled_from(["ANCHOR: x", "[agent-room checkpoint] y"]))
def test_a_checkpoint_is_a_checkpoint_on_every_transport(
    wrapper: Callable[[str], str], body: str
) -> None:
    assert classify_prompt(wrapper(body)).kind == PromptKind.CHECKPOINT


@given(text=st.text(max_size=200), wrapper=wrappers())
def test_unwrapping_agrees_with_the_typed_prompt(text: str, wrapper: Callable[[str], str]) -> None:
    """Whatever the text, wrapped it classifies as typed, except that a wrapped prompt
    of nobody in the room is another session's message."""
    typed = classify(text.strip())
    found = classify_prompt(wrapper(text))
    if unwrap(wrapper(text))[1] and typed.kind == PromptKind.HUMAN:
        assert found.kind in (PromptKind.PEER, PromptKind.NOTICE)
    elif typed.kind != PromptKind.HUMAN:
        assert (found.kind, found.message_ids) == (typed.kind, typed.message_ids)


def test_the_real_clients_wrapping_of_a_peer_message() -> None:
    """Claude Code 2.1.330's UserPromptSubmit for a message through its socket."""
    lines = (FIXTURES / "claude-native" / "user-prompt-submit-cross-session.jsonl").read_text()
    for line in lines.splitlines():
        prompt = json.loads(line)["prompt"]
        assert classify_prompt(prompt).kind == PromptKind.PEER
        assert origin(classify_prompt(prompt)) == Origin.MESSAGE
    notice = "[Cross-session delivery notice] Your message to another session was held"
    assert origin(classify_prompt(notice)) == Origin.NOTICE


def _row(sender: str, body: str, kind: str = "system") -> dict[str, object]:
    return {"sender": sender, "kind": kind, "body": body}


def test_a_nudge_takes_the_origin_of_what_it_named() -> None:
    nudge = classify_prompt(native("[agent-room] 1 new message from @room (#4)"))
    reminder = _row("room", anchor_reminder(1, "lead"))
    timer = _row("room", fired_text("anchor", "back to the parser"))
    notice = _row("room", rules_text(1, "a", "b", Role.RESPONDER, 8))
    crossing = _row("lead", "[From @lead] more", "link")
    chat = _row("lead", "hello", "chat")
    operator = _row("operator", "please stop", "chat")
    assert origin(nudge, [reminder]) == Origin.REMINDER
    assert origin(nudge, [timer]) == Origin.TIMER
    assert origin(nudge, [notice]) == Origin.NOTICE
    assert origin(nudge, [crossing]) == Origin.CROSSING
    assert origin(nudge, [chat, reminder]) == Origin.MESSAGE  # it answers the peer
    assert origin(nudge, [operator, timer]) == Origin.PERSON
    assert origin(nudge, []) == Origin.NUDGE  # the messages are gone: still the room's
    assert cause(Origin.CROSSING, [reminder, crossing]) == "lead"
    assert cause(Origin.REMINDER, [reminder]) == "room"
    assert cause(Origin.PERSON, [operator]) is None
    assert cause(Origin.CHECKPOINT) is None  # typed at the prompt: not the room's doing


def test_the_reminder_mark_is_the_reminders_own() -> None:
    assert anchor_reminder(3, "lead").startswith(REMINDER_PREFIX)


def test_the_origin_families() -> None:
    assert not ROOM_MADE & ANSWERS
    assert Origin.PERSON not in ROOM_CAUSED
    assert Origin.CONTINUED not in ROOM_CAUSED


def test_the_turn_breaker_trips_on_a_ping_pong_not_on_a_stream() -> None:
    from agent_room.turn.core.loops import turn_trip

    limits = {"agent_max": 60, "pair_max": 16}
    assert turn_trip("b", 59, {}, **limits) is None  # the 60th may start
    assert turn_trip("b", 60, {}, **limits) == ("b",)  # the 61st may not
    assert turn_trip("b", 30, {"a": (30, 0)}, **limits) is None  # work one way only
    assert turn_trip("b", 16, {"a": (8, 8)}, **limits) is None  # eight each way: the limit
    assert turn_trip("b", 17, {"a": (8, 9)}, **limits) == ("a", "b", "a")
    assert turn_trip("b", 99, {"a": (8, 9)}, agent_max=0, pair_max=0) is None  # off
