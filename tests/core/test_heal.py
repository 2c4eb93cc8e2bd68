"""The healing rules: what the room observes overrides a state only once it has held for
longer than a hook may take, a dialog at once, and a timeout alone changes nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from agent_room.core.heal import (
    GRACE,
    RECHECK,
    STALE_AFTER,
    Observation,
    Seen,
    Source,
    due,
    held_since,
    transcript_state,
    verdict,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _idle(since: float | None = None) -> Observation:
    return Observation("idle", Source.REGISTRY, since=since)


def test_a_lost_stop_heals_once_the_idle_client_has_held_past_the_grace() -> None:
    seen = held_since(None, _idle(100.0), 100.0 + GRACE - 0.1)
    assert (
        verdict(
            state="busy",
            state_since=90.0,
            observation=_idle(100.0),
            seen=seen,
            now=seen.since + GRACE - 0.1,
        )
        is None
    )
    heal = verdict(
        state="busy", state_since=90.0, observation=_idle(100.0), seen=seen, now=100.0 + GRACE
    )
    assert heal is not None
    assert heal.state == "idle"
    assert "the client's registry says idle" in heal.reason


def test_a_slow_hook_is_never_raced() -> None:
    """The room's own state changed within the grace (a hook just wrote): it stands."""
    seen = Seen("idle", 0.0)
    assert (
        verdict(state="busy", state_since=98.0, observation=_idle(), seen=seen, now=100.0) is None
    )


def test_an_observation_without_a_time_holds_from_the_first_pass_that_saw_it() -> None:
    observation = Observation("idle", Source.TRANSCRIPT)
    first = held_since(None, observation, 10.0)
    assert held_since(first, observation, 14.0) == first
    assert held_since(first, Observation("busy", Source.TRANSCRIPT), 14.0) == Seen("busy", 14.0)


def test_a_dialog_stops_typing_at_once_and_its_answer_waits_the_grace() -> None:
    waiting = Observation("waiting", Source.REGISTRY, since=99.9)
    heal = verdict(
        state="idle", state_since=0.0, observation=waiting, seen=Seen("waiting", 99.9), now=100.0
    )
    assert heal is not None
    assert heal.state == "waiting"
    busy = Observation("busy", Source.REGISTRY, since=99.0)
    assert (
        verdict(
            state="waiting", state_since=0.0, observation=busy, seen=Seen("busy", 99.0), now=100.0
        )
        is None
    )
    heal = verdict(
        state="waiting", state_since=0.0, observation=busy, seen=Seen("busy", 90.0), now=100.0
    )
    assert heal is not None
    assert heal.state == "busy"


@pytest.mark.parametrize("state", ["idle", "ended"])
def test_nothing_observed_or_nothing_to_heal_keeps_the_state(state: str) -> None:
    assert verdict(state=state, state_since=0.0, observation=None, seen=None, now=1e9) is None
    seen = Seen("busy", 0.0)
    busy = Observation("busy", Source.REGISTRY)
    assert verdict(state=state, state_since=0.0, observation=busy, seen=seen, now=1e9) is None


def test_a_busy_state_is_looked_at_after_it_stood_a_while_and_not_too_often() -> None:
    assert not due("busy", 100.0, None, 100.0 + STALE_AFTER - 0.1)
    assert due("busy", 100.0, None, 100.0 + STALE_AFTER)
    assert not due("busy", 0.0, 50.0, 50.0 + RECHECK - 0.1)
    assert due("idle", 100.0, None, 100.0)  # its registry only (a dialog)
    assert not due("ended", 0.0, None, 1e9)


def _lines(*records: Mapping[str, object]) -> list[str]:
    return [json.dumps(r) for r in records]


def test_claude_codes_transcript_ends_a_turn_after_its_stop_hooks() -> None:
    lines = (FIXTURES / "claude-code-2.1.330" / "transcript-interactive.jsonl").read_text()
    assert transcript_state(lines.splitlines()) == "idle"
    prompt = {"type": "user", "message": {"role": "user", "content": "go"}}
    answer = {"type": "assistant", "message": {"stop_reason": "end_turn", "content": []}}
    tool = {"type": "assistant", "message": {"stop_reason": "tool_use", "content": []}}
    assert transcript_state(_lines(prompt)) == "busy"
    assert transcript_state(_lines(prompt, tool)) == "busy"
    assert transcript_state(_lines(prompt, answer)) == "busy"  # its Stop hooks still run
    ended = {"type": "system", "subtype": "stop_hook_summary"}
    assert transcript_state([*_lines(prompt, answer, ended), "{cut"]) == "idle"


def test_codex_and_gemini_transcripts() -> None:
    started = {"type": "event_msg", "payload": {"type": "task_started"}}
    complete = {"type": "event_msg", "payload": {"type": "task_complete"}}
    aborted = {"type": "event_msg", "payload": {"type": "turn_aborted"}}
    count = {"type": "event_msg", "payload": {"type": "token_count"}}
    assert transcript_state(_lines(started, count)) == "busy"
    assert transcript_state(_lines(started, complete, count)) == "idle"
    assert transcript_state(_lines(started, aborted)) == "idle"
    user = {"type": "user", "content": "go"}
    calling = {"type": "gemini", "content": "", "toolCalls": [{"id": "1"}]}
    answer = {"type": "gemini", "content": "done"}
    update = {"$set": {"lastUpdated": "now"}}
    assert transcript_state(_lines(user, update)) == "busy"
    assert transcript_state(_lines(user, calling)) == "busy"
    assert transcript_state(_lines(user, calling, answer, update)) == "idle"
    assert transcript_state(["not json", "[]"]) is None
