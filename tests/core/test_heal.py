"""The healing rules: what the room observes overrides a state only once it has held for
longer than a hook may take, a dialog at once, and a timeout alone changes nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from agent_room.core.heal import (
    GRACE,
    IDLE_RECHECK,
    RECHECK,
    REGISTRY_GRACE,
    STALE_AFTER,
    Heal,
    Observation,
    Seen,
    Source,
    due,
    held_since,
    screen_observation,
    shows_dialog,
    transcript_state,
    verdict,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _idle(since: float | None = None, source: Source = Source.REGISTRY) -> Observation:
    return Observation("idle", source, since=since)


@pytest.mark.parametrize(
    ("source", "grace"), [(Source.REGISTRY, REGISTRY_GRACE), (Source.TRANSCRIPT, GRACE)]
)
def test_a_lost_stop_heals_once_the_idle_client_has_held_past_the_grace(
    source: Source, grace: float
) -> None:
    """Claude Code's registry turns idle only after the turn's Stop hooks ran: a second
    is enough; a transcript's end is believed after longer than a hook may take."""
    idle = _idle(100.0, source)
    seen = held_since(None, idle, 100.0 + grace - 0.1)
    early = verdict(
        state="busy", state_since=90.0, observation=idle, seen=seen, now=100.0 + grace - 0.1
    )
    assert early is None
    heal = verdict(state="busy", state_since=90.0, observation=idle, seen=seen, now=100.0 + grace)
    assert heal is not None
    assert heal.state == "idle"
    assert f"{source} says idle" in heal.reason


def test_a_slow_hook_is_never_raced() -> None:
    """The room's own state changed within the grace (a hook just wrote): it stands."""
    seen = Seen("idle", 0.0)
    hook_wrote = 100.0 - REGISTRY_GRACE / 2
    idle = _idle()
    assert (
        verdict(state="busy", state_since=hook_wrote, observation=idle, seen=seen, now=100.0)
        is None
    )
    transcript = _idle(source=Source.TRANSCRIPT)
    assert (
        verdict(state="busy", state_since=96.0, observation=transcript, seen=seen, now=100.0)
        is None
    )


def test_an_observation_without_a_time_holds_from_the_first_pass_that_saw_it() -> None:
    observation = Observation("idle", Source.TRANSCRIPT)
    first = held_since(None, observation, 10.0)
    assert held_since(first, observation, 14.0) == first
    assert held_since(first, Observation("busy", Source.TRANSCRIPT), 14.0) == Seen("busy", 14.0)


def test_a_dialog_stops_typing_at_once_and_its_answer_waits_the_grace() -> None:
    waiting = Observation("waiting", Source.SCREEN)
    heal = verdict(
        state="idle", state_since=0.0, observation=waiting, seen=Seen("waiting", 99.9), now=100.0
    )
    assert heal is not None
    assert heal.state == "waiting"
    busy = Observation("busy", Source.REGISTRY, since=99.5)
    assert (
        verdict(
            state="waiting", state_since=0.0, observation=busy, seen=Seen("busy", 99.5), now=100.0
        )
        is None
    )
    heal = verdict(
        state="waiting", state_since=0.0, observation=busy, seen=Seen("busy", 90.0), now=100.0
    )
    assert heal is not None
    assert heal.state == "busy"


def test_a_transcript_ends_a_dialog_only_with_a_line_written_after_it_opened() -> None:
    """The tool call that asks for permission is in the transcript before the dialog opens
    and reads as busy: only a line written after it (the tool's result) says it was
    answered."""

    def dialog_opened_at_50(written: float | None) -> Heal | None:
        busy = Observation("busy", Source.TRANSCRIPT, since=written)
        seen = Seen("busy", 40.0 if written is None else written)
        return verdict(state="waiting", state_since=50.0, observation=busy, seen=seen, now=100.0)

    assert dialog_opened_at_50(40.0) is None
    assert dialog_opened_at_50(None) is None  # no time: not after
    heal = dialog_opened_at_50(60.0)
    assert heal is not None
    assert heal.state == "busy"
    assert heal.reason == "the transcript says busy: the dialog was answered"


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


def test_a_quiet_idle_session_is_due_only_now_and_then() -> None:
    assert due("idle", 0.0, None, 100.0, quiet=True)  # never looked at: once
    assert due("idle", 0.0, 50.0, 50.0 + RECHECK)  # not watched: every second
    assert not due("idle", 0.0, 50.0, 50.0 + IDLE_RECHECK - 0.1, quiet=True)
    assert due("idle", 0.0, 50.0, 50.0 + IDLE_RECHECK, quiet=True)
    assert due("busy", 0.0, 50.0, 50.0 + RECHECK, quiet=True)  # quiet is for idle only


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


def test_a_command_run_in_claude_code_itself_is_no_turn() -> None:
    """``/exit`` typed into Claude Code 2.1.332 writes ``user`` records (the caveat, the
    command, its output; older releases wrote ``system`` ones): no prompt, no turn."""
    snapshot = {"type": "file-history-snapshot", "messageId": "5f", "snapshot": {}}
    caveat = {
        "type": "user",
        "isMeta": True,
        "rowSource": "harness",
        "message": {"role": "user", "content": "<local-command-caveat>The command below"},
    }
    command = {
        "type": "user",
        "rowSource": "local",
        "message": {"role": "user", "content": "<command-name>/exit</command-name>"},
    }
    output = {
        "type": "user",
        "message": {
            "role": "user",
            "content": "<local-command-stdout>See ya!</local-command-stdout>",
        },
    }
    older = {"type": "system", "subtype": "local_command", "content": "<command-name>/model"}
    assert transcript_state(_lines(snapshot, caveat, command, output)) is None
    assert transcript_state(_lines(older)) is None
    prompt = {"type": "user", "message": {"role": "user", "content": "go"}}
    assert transcript_state(_lines(caveat, command, output, prompt)) == "busy"
    ended = {"type": "system", "subtype": "stop_hook_summary"}
    assert transcript_state(_lines(prompt, ended, caveat, command, output)) == "idle"


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


CODEX_OFFER = """
  Meet GPT-6 Sol

  Our latest Sol is more intelligent and more efficient so your usage limits

\u203a 1. Try new model
  2. Use existing model

  enter/esc confirm \u00b7 ^c quit
"""
GEMINI_APPROVAL = """
\u2502 Allow execution of [Shell]?                         \u2502
\u2502 \u25cf 1. Allow once                                   \u2502
\u2502   2. Allow for this session                         \u2502
"""
CODEX_PROMPT = "\u203a Ask Codex to do anything\n\n  ? for shortcuts"


def test_a_clients_own_dialog_is_read_off_its_pane() -> None:
    assert shows_dialog(CODEX_OFFER)
    assert shows_dialog(GEMINI_APPROVAL)
    assert not shows_dialog(CODEX_PROMPT)
    assert not shows_dialog("1. a list the agent printed\n2. and more")
    offer = screen_observation("idle", CODEX_OFFER)
    assert offer == Observation("waiting", Source.SCREEN)
    assert screen_observation("waiting", CODEX_PROMPT) == Observation("idle", Source.SCREEN)
    assert screen_observation("idle", CODEX_PROMPT) is None
    assert screen_observation("busy", CODEX_PROMPT) is None
