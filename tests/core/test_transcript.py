"""``core.transcript``: turns from real Claude Code transcripts, and the tail reader.

The transcripts are real (tests/fixtures: captured from the pinned client, and public
ones from a project using Claude Code 2.1.38); the big file is built from their lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent_room.adapters.transcripts import read_tail
from agent_room.core.transcript import (
    EntryKind,
    group_turns,
    last_turns,
    parse_line,
    parse_lines,
    summarise_input,
)
from tests.conftest import FIXTURES

SHORT = FIXTURES / "transcripts" / "spotter_short.jsonl"
COMPACT = FIXTURES / "transcripts" / "spotter_excerpt_turn_end_compact.jsonl"
INTERACTIVE_330 = FIXTURES / "claude-code-2.1.330" / "transcript-interactive.jsonl"
TOOL_USE_197 = FIXTURES / "claude-code-2.1.197" / "transcript-print-tool-use.jsonl"


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_a_turn_is_the_prompt_the_text_and_the_tool_calls() -> None:
    (turn,) = last_turns(_lines(SHORT), 5)
    assert turn.prompt == "mix phx.server doesnt seem to start"
    assert turn.at == "2026-02-10T21:11:56.846Z"
    assert turn.texts == (
        "Let me check the project structure and try running the server to see the error.",
    )
    assert [(t.name, t.summary) for t in turn.tools] == [
        ("Bash", "mix phx.server 2>&1 | head -80"),
        ("Glob", "mix.exs"),
    ]
    # the user refused both calls and interrupted the turn
    assert all(t.failed for t in turn.tools)
    assert turn.interrupted


def test_thinking_bookkeeping_and_request_blobs_are_not_the_conversation() -> None:
    entries = parse_lines(_lines(INTERACTIVE_330))
    assert [(e.kind, e.text) for e in entries] == [
        (EntryKind.PROMPT, "PROMPT: hi 330"),
        (EntryKind.TEXT, "Echo: PROMPT: hi 330"),
    ]
    short = parse_lines(_lines(SHORT))
    assert not any("thinking" in e.text for e in short)


def test_an_agent_tool_call_and_its_final_text() -> None:
    (turn,) = last_turns(_lines(TOOL_USE_197), 1)
    assert turn.tools[0].summary == "echo hi > /home/dev/project/ran.txt"
    assert not turn.tools[0].failed
    assert turn.texts == ("done",)


def test_compaction_and_slash_commands() -> None:
    turns = group_turns(parse_lines(_lines(COMPACT)))
    assert [t.prompt for t in turns] == [
        None,  # the excerpt starts inside a turn
        "/compact and continue with the reamining tasks",
        "continue implementation",
    ]
    assert turns[1].compacted
    assert not turns[2].compacted
    assert turns[0].texts[-1].startswith("Perfect! I have successfully completed")
    assert last_turns(_lines(COMPACT), 1) == turns[-1:]


def test_sidechain_meta_and_broken_lines_are_skipped() -> None:
    prompt = {"type": "user", "message": {"role": "user", "content": "hello"}}
    assert parse_line(json.dumps(prompt))[0].text == "hello"
    assert parse_line(json.dumps({**prompt, "isSidechain": True})) == []
    assert parse_line(json.dumps({**prompt, "isMeta": True})) == []
    assert parse_line('{"type":"user","message":{"content":"hel') == []
    assert parse_line(b'\xff\xfe not json "user"') == []


def test_tool_inputs_are_summarised_on_one_line() -> None:
    assert summarise_input({"command": "ls\n-la", "timeout": 5}) == "ls -la"
    assert summarise_input({"file_path": "/a/b.py", "old_string": "x"}) == "/a/b.py"
    assert summarise_input({"b": 1, "a": 2}) == '{"a": 2, "b": 1}'
    assert len(summarise_input({"command": "x" * 1000})) == 160


def _big_transcript(path: Path, turns: int) -> int:
    """A transcript of ``turns`` real turns (the fixture's, renumbered), with bulky
    bookkeeping lines between; returns its size."""
    lines = _lines(SHORT)
    with path.open("wb") as out:
        for n in range(turns):
            for line in lines:
                out.write(line.replace(b"doesnt seem to start", f"turn {n}".encode()) + b"\n")
            out.write(b'{"type":"progress","data":"' + b"x" * 20_000 + b'"}\n')
    return path.stat().st_size


def test_the_tail_of_a_big_transcript_is_read_from_the_end(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    size = _big_transcript(path, 2000)
    assert size > 40_000_000
    tail = read_tail(str(path), 3)
    assert [t.prompt for t in tail.turns] == [
        "mix phx.server turn 1997",
        "mix phx.server turn 1998",
        "mix phx.server turn 1999",
    ]
    assert tail.turns[-1].tools[0].name == "Bash"
    assert tail.read < 500_000  # a few blocks from the end, not the 40 MB
    assert not tail.whole_file


def test_a_small_transcript_is_read_whole(tmp_path: Path) -> None:
    tail = read_tail(str(COMPACT), 10)
    assert tail.whole_file
    assert [t.prompt for t in tail.turns][1:] == [
        "/compact and continue with the reamining tasks",
        "continue implementation",
    ]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(_lines(SHORT)[0][:50])  # being written: a cut last line
    assert read_tail(str(path), 2).turns == []


def test_the_read_stops_at_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "one-long-turn.jsonl"
    _big_transcript(path, 1)
    with path.open("ab") as out:
        for _ in range(100):
            out.write(b'{"type":"assistant","message":{"content":"' + b"y" * 10_000 + b'"}}\n')
    tail = read_tail(str(path), 1, block=4096, cap=100_000)
    assert tail.read <= 100_000
    assert tail.turns[0].prompt is None  # the turn's start lies beyond the cap
