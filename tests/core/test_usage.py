"""Usage read from the real records of each pinned client, and the budget arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_room.core.attention import RoomFacts, alerts
from agent_room.core.usage import (
    DAY,
    ROOM,
    STOP_AT,
    WARN_AT,
    Price,
    Tokens,
    level,
    money,
    overrides_from,
    price_of,
    span_start,
)
from agent_room.core.usage_records import Client, ReadState, ask_records, records_of_lines
from agent_room.turn.core.errors import BadInput

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _merged(path: Path) -> dict[str, Tokens]:
    """Records by key, each count its largest (what the store keeps)."""
    found, _ = records_of_lines(_lines(path))
    merged: dict[str, Tokens] = {}
    for r in found:
        old = merged.get(r.key, Tokens())
        merged[r.key] = Tokens(
            max(old.input, r.tokens.input),
            max(old.output, r.tokens.output),
            max(old.cache_read, r.tokens.cache_read),
            max(old.cache_write, r.tokens.cache_write),
        )
    return merged


def test_claude_code_2_1_330_transcript_gives_each_message_once_with_its_model() -> None:
    found, _ = records_of_lines(
        _lines(FIXTURES / "claude-code-2.1.330" / "transcript-interactive.jsonl")
    )
    assert found, "the transcript has assistant messages with usage"
    assert {r.model for r in found} == {"claude-opus-5-5"}
    assert {r.client for r in found} == {Client.CLAUDE}
    assert all(r.tokens == Tokens(input=10, output=5) for r in found)
    assert all(r.key.startswith("msg_") and r.at for r in found)


def test_claude_code_2_1_330_against_a_stand_in_reporting_all_four_counts() -> None:
    path = FIXTURES / "claude-code-2.1.330" / "transcript-link-usage.jsonl"
    found, _ = records_of_lines(_lines(path))
    merged = _merged(path)
    assert len(found) == 6  # a text and a tool call of one message: two lines
    assert len(merged) == 5
    assert {r.model for r in found} == {"claude-opus-5-5"}
    assert all(t.input and t.output and t.cache_read and t.cache_write for t in merged.values())
    assert merged["msg_84ab4531a98448f4a7a3cd4c"] == Tokens(643, 36, 3850, 641)


def test_claude_code_lines_of_one_message_repeat_its_usage_and_the_largest_count_wins() -> None:
    path = FIXTURES / "transcripts" / "spotter_excerpt_turn_end_compact.jsonl"
    merged = _merged(path)
    assert merged["msg_01AoZZjgwnpzNtXDP2qhunxC"] == Tokens(3, 514, 138272, 348)
    assert merged["msg_014XmdRT9b91t65oKLBwWYrv"] == Tokens(3, 9, 21448, 23812)
    found, _ = records_of_lines(_lines(path))
    assert len(found) > len(merged)  # one line per content block


def test_claude_code_2_1_197_print_transcript_and_result() -> None:
    found, _ = records_of_lines(
        _lines(FIXTURES / "claude-code-2.1.197" / "transcript-print-tool-use.jsonl")
    )
    assert {r.model for r in found} == {"claude-opus-4-8"}
    result = json.loads((FIXTURES / "claude-code-2.1.197" / "print-output.json").read_text())
    (ask,) = ask_records(result, key="ask:1", at=100.0)
    assert ask.model == "claude-opus-4-8"  # the client's "[1m]" context mark dropped
    assert ask.tokens == Tokens(input=10, output=5)
    assert ask.cost_usd == pytest.approx(0.000175)
    assert ask.client == Client.ASK


def test_claude_p_result_without_a_breakdown_keeps_its_total_cost() -> None:
    (ask,) = ask_records(
        {"total_cost_usd": 0.5, "usage": {"input_tokens": 7, "output_tokens": 2}}, key="k", at=1
    )
    assert (ask.model, ask.tokens, ask.cost_usd) == (None, Tokens(7, 2), 0.5)


def test_claude_code_sidechain_lines_name_their_subagent() -> None:
    line = json.dumps(
        {
            "type": "assistant",
            "isSidechain": True,
            "agentId": "a1b2",
            "timestamp": "2026-11-21T11:12:32.434Z",
            "message": {"id": "msg_1", "model": "claude-haiku-4-5", "usage": {"output_tokens": 3}},
        }
    ).encode()
    synthetic = json.dumps(
        {"type": "assistant", "message": {"id": "m2", "model": "<synthetic>", "usage": {}}}
    ).encode()
    (found,), _ = records_of_lines([line, synthetic, b"not json", b'{"usage": 1'])
    assert (found.agent_id, found.tokens.output) == ("a1b2", 3)


@pytest.mark.parametrize(
    ("name", "count"),
    [("codex-exec-rollout-shell-turn.jsonl", 2), ("codex-tui-nodaemon-rollout-resumed.jsonl", 2)],
)
def test_codex_0_169_rollout_token_counts_with_the_turn_contexts_model(
    name: str, count: int
) -> None:
    found, state = records_of_lines(_lines(FIXTURES / "codex-0.169.0" / name))
    assert len(found) == count
    assert {r.model for r in found} == {"stand-in-model"}
    assert state.model == "stand-in-model"
    assert all(r.tokens == Tokens(input=10, output=5) for r in found)
    assert len({r.key for r in found}) == count  # the running total names each request


def test_codex_model_carries_from_one_chunk_to_the_next_and_cached_input_is_split() -> None:
    context = b'{"type":"turn_context","payload":{"model":"gpt-5.1-codex"}}'
    count = json.dumps(
        {
            "type": "event_msg",
            "timestamp": "2026-11-21T11:26:26.580Z",
            "payload": {
                "type": "token_count",
                "info": {
                    "total_token_usage": {"total_tokens": 1200},
                    "last_token_usage": {
                        "input_tokens": 1000,
                        "cached_input_tokens": 800,
                        "output_tokens": 200,
                    },
                },
            },
        }
    ).encode()
    _, state = records_of_lines([context])
    (found, _again), _ = records_of_lines([count, count], ReadState())  # no model known
    assert found.model is None
    (found, again), _ = records_of_lines([count, count], state)
    assert found.model == "gpt-5.1-codex"
    assert found.tokens == Tokens(input=200, output=200, cache_read=800)
    assert found.key == again.key  # a repeated event is the same request


@pytest.mark.parametrize(
    ("name", "count"),
    [("gemini-headless-session-shell-turn.jsonl", 2), ("gemini-tui-session-many-turns.jsonl", 30)],
)
def test_gemini_cli_0_61_chat_answers_with_their_tokens(name: str, count: int) -> None:
    """An answer rewritten later (its id again) is one request; the ``$set`` lines that
    repeat the whole chat are not read."""
    found, _ = records_of_lines(_lines(FIXTURES / "gemini-cli-0.61.0" / "chats" / name))
    assert len({r.key for r in found}) == count
    assert {r.model for r in found} == {"gemini-3.8-flash"}
    assert all(r.tokens == Tokens(input=10, output=5) for r in found)
    assert {r.client for r in found} == {Client.GEMINI}


def test_a_price_per_million_tokens_counts_cache_reads_and_writes_at_their_own_rate() -> None:
    price = Price(input=3, output=15, cache_read=0.3, cache_write=3.75)
    assert price.cost(Tokens(1_000_000, 0, 0, 0)) == pytest.approx(3)
    assert price.cost(Tokens(0, 1000, 1000, 1000)) == pytest.approx(0.01905)
    assert Price(1, 2).cost(Tokens(cache_read=1_000_000)) == pytest.approx(1)


def test_price_overrides_from_settings_pass_over_bad_entries() -> None:
    found = overrides_from({"m": {"input": 1, "output": 2}, "bad": {"input": -1}, "x": 3})
    assert found == {"m": Price(1.0, 2.0)}
    with pytest.raises(BadInput):
        price_of({"input": 1})
    assert overrides_from("junk") == {}


def test_budget_levels_and_spans() -> None:
    assert level(0.79, 1.0) == 0
    assert level(0.8, 1.0) == WARN_AT
    assert level(1.0, 1.0) == STOP_AT
    assert level(0.0, 0.0) == STOP_AT  # a budget of nothing holds everything
    assert span_start(DAY * 3 + 5) == DAY * 3
    assert span_start(3600 * 5 + 1, 3600) == 3600 * 5


def test_money_says_when_a_cost_is_unknown_or_partly_unknown() -> None:
    assert money(None) == "?"
    assert money(0.0, known=False) == "?"
    assert money(1.234) == "$1.23"
    assert money(0.001) == "<$0.01"
    assert money(2.0, known=False) == "$2.00+"


def test_budget_alerts_are_keyed_per_scope_level_and_span() -> None:
    facts = RoomFacts(
        budgets=(("web", 80, 8.0, 10.0, DAY, DAY * 5), (ROOM, 100, 52.0, 50.0, DAY, DAY * 5))
    )
    web, room = alerts(facts, now=DAY * 5 + 10, permission_after=30)
    assert (web.key, web.kind, web.agent) == (f"budget:web:80:{DAY * 5:.0f}", "budget", "web")
    assert web.text == "@web has spent 80 % of its budget ($8.00 of $10.00 since 1970-01-06)"
    assert room.agent == "room"
    assert room.text.startswith("the room spent its budget ($52.00 of $50.00 since 1970-01-06)")
    assert "agent-room budget set --room AMOUNT" in room.text


def test_codex_and_gemini_against_a_stand_in_reporting_cached_input() -> None:
    """The records of the pinned clients against the stand-ins that report cached input
    (``tests/clients/test_usage_clients.py``): the cached part comes apart from the rest."""
    (codex,), _ = records_of_lines(
        _lines(FIXTURES / "codex-0.169.0" / "codex-tui-rollout-cached-usage.jsonl")
    )
    assert (codex.key, codex.model) == ("total:6940", "stand-in-model")
    assert codex.tokens == Tokens(input=6937 - 5202, output=3, cache_read=5202)
    (gemini,), _ = records_of_lines(
        _lines(FIXTURES / "gemini-cli-0.61.0" / "chats" / "gemini-tui-session-cached-usage.jsonl")
    )
    assert gemini.model == "gemini-3.8-flash"
    assert gemini.tokens == Tokens(input=181 - 135, output=7, cache_read=135)
