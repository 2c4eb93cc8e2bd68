"""``agent-room peek`` and ``agent-room rename`` (and ``join --pane`` renaming) as real
processes: output, who may peek, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.conftest import FIXTURES, Cli
from tests.room.conftest import register

SHORT = FIXTURES / "transcripts" / "spotter_short.jsonl"
COMPACT = FIXTURES / "transcripts" / "spotter_excerpt_turn_end_compact.jsonl"
OPERATOR = {"CLAUDECODE": "", "CLAUDE_CODE_SESSION_ID": ""}
"""A plain terminal: none of the variables a Claude Code client sets."""


@pytest.fixture
def agents(room_home: Path, tmp_path: Path) -> Room:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    for name, source in (("a", SHORT), ("b", COMPACT), ("c", SHORT)):
        path = tmp_path / f"{name}.jsonl"
        shutil.copy(source, path)
        register(room, name, transcript_path=str(path), pane=f"%{ord(name)}")
    return room


def test_the_operator_reads_the_last_turns(agents: Room, cli: Cli) -> None:
    result = cli("peek", "@b", "--turns", "2", env=OPERATOR)
    assert result.code == 0, result
    assert "@b (idle) · session s-b · last 2 turns of " in result.err
    out = result.out
    assert out.startswith("--- turn 1/2 · 2026-02-12 14:47:08 ---\n")
    assert "(the conversation was compacted before this turn)" in out
    assert "> /compact and continue with the reamining tasks" in out
    assert "> continue implementation\nLet me check the current state and remaining work.\n" in out
    assert "  (1 tool call; --tools shows them)" in out
    assert "[Bash]" not in out


def test_tools_show_each_call_with_its_input(agents: Room, cli: Cli) -> None:
    out = cli("peek", "a", "--tools", env=OPERATOR).out
    assert "  [Bash] mix phx.server 2>&1 | head -80  (failed)\n" in out
    assert "  [Glob] mix.exs  (failed)\n" in out
    assert "(interrupted)" in out


def test_json(agents: Room, cli: Cli) -> None:
    data = json.loads(cli("peek", "a", "--json", "--tools", env=OPERATOR).out)
    assert data["name"] == "a"
    assert data["whole_file"] is True
    (turn,) = data["turns"]
    assert turn["prompt"] == "mix phx.server doesnt seem to start"
    assert turn["tools"][0] == {
        "name": "Bash",
        "input": "mix phx.server 2>&1 | head -80",
        "failed": True,
    }


def test_an_agent_needs_an_open_link(agents: Room, cli: Cli) -> None:
    refused = cli("peek", "b", name="a", env=OPERATOR)
    assert refused.code == 1
    assert refused.err.strip().splitlines() == [
        "agent-room: @a has no open link to @b: an agent peeks only at peers it is linked to"
        " (open one with: agent-room send @b --link TEXT)"
    ]
    assert refused.out == ""
    # the pane tells who runs it, as much as the name does
    assert cli("peek", "b", env={**OPERATOR, "TMUX_PANE": "%97"}).code == 1
    assert cli("send", "@b", "--link", "let us work on it", name="a").code == 0
    assert cli("peek", "b", name="a").code == 0
    assert cli("peek", "a", name="b").code == 0
    assert cli("peek", "b", name="c").code == 1
    # an unregistered agent is not the operator
    unknown = cli("peek", "b", env={"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "x"})
    assert unknown.code == 1
    assert "not in the room" in unknown.err


def test_bad_input_is_one_line(agents: Room, cli: Cli) -> None:
    for args in (("peek",), ("peek", "a", "--turns", "0"), ("peek", "Bad Name")):
        result = cli(*args, env=OPERATOR)
        assert result.code == 2, (args, result)
        assert len(result.err.strip().splitlines()) == 1
        assert "Traceback" not in result.err
    missing = cli("peek", "zed", env=OPERATOR)
    assert missing.code == 2
    assert "nobody named @zed" in missing.err


def test_rename_and_join_on_a_held_pane(agents: Room, cli: Cli) -> None:
    assert cli("send", "@b", "for b", name="a").code == 0
    renamed = cli("rename", "b", "bee")
    assert renamed.code == 0, renamed
    assert renamed.err == "@b is now @bee; 1 waiting message follows it\n"
    inbox = cli("inbox", name="b")  # launched as b: still itself after the rename
    assert inbox.code == 0, inbox
    assert "---\nfor b\n" in inbox.out
    joined = cli("join", "cee", "--pane", "%99")
    assert joined.err == "@c in pane %99 is now @cee\n"
    who = json.loads(cli("who", "--json").out)
    assert sorted(s["name"] for s in who) == ["a", "bee", "cee"]
    taken = cli("rename", "bee", "a")
    assert taken.code == 1
    assert taken.err.startswith("agent-room: @a is taken by another session")
    gone = cli("send", "@b", "hello", name="a")
    assert gone.code == 2
    assert gone.err == "agent-room: @b was renamed: it is @bee now\n"


def test_control_characters_in_a_transcript_are_shown_not_acted_on(
    agents: Room, cli: Cli, tmp_path: Path
) -> None:
    hostile = "\x1b]2;owned\x07\x1b[2Jdone\rX\u202e"
    line = {"type": "assistant", "message": {"content": [{"type": "text", "text": hostile}]}}
    path = tmp_path / "a.jsonl"
    with path.open("a") as out:
        out.write(json.dumps(line) + "\n")
    result = cli("peek", "a", env=OPERATOR)
    assert "\\x1b]2;owned\\x07\\x1b[2Jdone\\rX\\u202e" in result.out
    assert "\x1b" not in result.out
    assert "\r" not in result.out
    exact = json.loads(cli("peek", "a", "--json", env=OPERATOR).out)
    assert exact["turns"][0]["text"].endswith(hostile)


def test_an_agent_renames_only_itself_and_stays_itself(agents: Room, cli: Cli) -> None:
    refused = cli("rename", "b", "bee", name="a")
    assert refused.code == 1
    assert refused.err == (
        "agent-room: @a may rename only itself: the operator renames any session\n"
    )
    assert cli("rename", "a", "ay", name="a").code == 0
    events = [e for e in agents.store.events() if e["kind"] == "session.renamed"]
    assert [e["actor"] for e in events] == ["a"]
    # still launched as a: peeks as itself, with its link, under its new name
    assert cli("send", "@b", "--link", "let us work on it", name="a").code == 0
    assert cli("peek", "b", name="a").code == 0
