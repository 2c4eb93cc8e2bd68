"""``codex exec --json`` events read as the answer an ask expects."""

from __future__ import annotations

import json

from agent_room.core.intercom_state import parse_answer
from agent_room.turn.core.clients import codex_exec_answer
from tests.conftest import FIXTURES

CODEX = FIXTURES / "codex-0.169.0"


def test_a_recorded_run_gives_its_thread_and_last_message() -> None:
    answer = codex_exec_answer((CODEX / "codex-exec-json-shell-turn.jsonl").read_text())
    parsed = parse_answer(json.dumps(answer))
    assert parsed.session_id == "01a1fddb-8c50-7580-b359-7df2821546df"
    assert parsed.result.startswith("TOOL-RESULT-SEEN:")
    assert (parsed.turns, parsed.is_error) == (1, False)  # the error item is a warning


def test_a_resumed_run_keeps_the_thread() -> None:
    text = (CODEX / "codex-exec-resume-by-id.jsonl").read_text()
    first = (CODEX / "codex-exec-json-text-turn.jsonl").read_text()
    assert codex_exec_answer(text)["session_id"] == codex_exec_answer(first)["session_id"]
    assert codex_exec_answer(text)["result"] == "PONG: follow-up by id"


def test_a_transport_error_without_an_answer_is_an_error() -> None:
    lines = [
        '{"type":"thread.started","thread_id":"t-1"}',
        '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected)"}',
        '{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}',
        "not json",
    ]
    answer = codex_exec_answer("\n".join(lines))
    assert answer["is_error"]
    assert answer["result"] == "stream disconnected before completion"
    assert answer["session_id"] == "t-1"
