"""Items from real transcripts, and a context chosen within its budget."""

from __future__ import annotations

from pathlib import Path

from agent_room.core.memory import (
    Candidate,
    Kind,
    build_context,
    estimate_tokens,
    items_of_lines,
    match_query,
)

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


def _items(name: str) -> list[tuple[str, str]]:
    lines = (TRANSCRIPTS / name).read_bytes().splitlines()
    return [(i.kind, i.text) for i in items_of_lines(lines)]


def test_commands_prompts_and_changed_files_of_real_transcripts() -> None:
    short = _items("spotter_short.jsonl")
    assert (Kind.PROMPT, "mix phx.server doesnt seem to start") in short
    assert (Kind.COMMAND, "mix phx.server 2>&1 | head -80") in short
    long = _items("spotter_excerpt_turn_end_compact.jsonl")
    assert (Kind.COMMAND, "git status --short") in long
    assert any(k == Kind.COMMAND and t.startswith("bd close spotter-4te.3") for k, t in long)
    changed = [t for k, t in long if k == Kind.CHANGED]
    assert "lib/spotter_web/controllers/hooks_controller.ex" in changed
    assert len(changed) == len(set(changed))  # three snapshots, each file once
    assert any(k == Kind.OPEN for k, _t in long)
    assert not any(t.startswith("#") for k, t in long if k == Kind.OPEN)


def test_files_read_and_changed_from_tool_calls() -> None:
    lines = [
        '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"1","name":"Read",'
        '"input":{"file_path":"/src/api.py"}}]}}',
        '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"2","name":"Edit",'
        '"input":{"file_path":"/src/client.ts","old_string":"a","new_string":"b"}}]}}',
        '{"type":"assistant","message":{"content":[{"type":"text",'
        '"text":"We decided to keep the v1 route. The migration still needs a test."}]}}',
    ]
    kinds = [(i.kind, i.text) for i in items_of_lines(lines)]
    assert (Kind.READ, "/src/api.py") in kinds
    assert (Kind.CHANGED, "/src/client.ts") in kinds
    assert (Kind.DECISION, "We decided to keep the v1 route.") in kinds
    assert (Kind.OPEN, "The migration still needs a test.") in kinds


def test_query_quotes_every_word() -> None:
    assert match_query('Build the "list" view', "Task = {id}") == (
        '"build" OR "the" OR "list" OR "view" OR "task"'
    )
    assert match_query("a b", "") is None


def test_budget_is_respected_and_relevance_beats_age() -> None:
    filler = [Candidate(i, Kind.SAID, f"turn {i}: " + "x" * 400) for i in range(1, 200)]
    relevant = Candidate(1, Kind.SAID, "the billing webhook retries", bm25=-9.0)
    context = build_context("api", [*filler, relevant], budget=1000)
    assert context.tokens <= 1000
    assert estimate_tokens(context.text) == context.tokens
    assert "billing webhook" in context.text  # the oldest item, but the one that matches
    assert "turn 1:" not in context.text  # an old item that does not match is left out
    assert "turn 199:" in context.text  # the newest is kept
    assert "characters / 4" in context.text


def test_an_empty_memory_still_makes_a_context() -> None:
    context = build_context("api", [], budget=200)
    assert context.items == 0
    assert "nothing remembered" in context.text
