"""The hook path stays off ``re`` and the ``json`` package: about 4 ms of every hook's
start, on every turn of every agent (``core.fastjson`` drives the C codec directly)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.turn.core import fastjson
from agent_room.turn.core.prompts import (
    DEFAULT_CHECKPOINT_PATTERNS,
    PromptKind,
    classify,
    link_peer,
    nudge_ids,
)
from tests.conftest import REPO
from tests.hooks.conftest import one_logged_line, only_the_log_beside

FIXTURES = REPO / "tests" / "fixtures" / "claude-code-2.1.330"

HOOKS = """
import io, json, sys
from pathlib import Path
from agent_room.turn.hooks import run_hook
fixtures = Path(sys.argv[1])
nudge = json.loads((fixtures / "hook-UserPromptSubmit.json").read_text())
nudge["prompt"] = "[agent-room] 1 new message from @backend (#1)"
payloads = [
    ("SessionStart", (fixtures / "hook-SessionStart-startup.json").read_bytes()),
    ("UserPromptSubmit", (fixtures / "hook-UserPromptSubmit.json").read_bytes()),
    ("Stop", (fixtures / "hook-Stop.json").read_bytes()),
    ("UserPromptSubmit", json.dumps(nudge).encode()),
    ("SessionEnd", (fixtures / "hook-SessionEnd-other.json").read_bytes()),
]
del sys.modules["json"], sys.modules["json.decoder"], sys.modules["json.scanner"]
del sys.modules["json.encoder"], sys.modules["re"]  # this script's own use of them
assert "sqlite3" not in sys.modules
out = sys.stdout
for event, raw in payloads:
    sys.stdout = io.StringIO()
    run_hook([event], {"AGENT_ROOM_HOME": sys.argv[2], "AGENT_ROOM_NAME": "frontend"},
             io.BytesIO(raw))
sys.stdout = out
print(" ".join(m for m in ("re", "json", "sqlite3") if m in sys.modules))
"""

SEND = """
import sys
from agent_room.cli import main
for name in ("re", "json", "datetime", "enum"):
    sys.modules.pop(name, None)  # what Python's start may have loaded: the send must not
main(["send", "@frontend", "hello", "--as", "backend"])
print(" ".join(m for m in ("re", "json", "datetime", "enum", "sqlite3") if m in sys.modules))
"""


def test_hooks_load_neither_re_nor_json(tmp_path: Path) -> None:
    room = tmp_path / "room"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_ROOM_")}
    result = subprocess.run(
        [sys.executable, "-c", HOOKS, str(FIXTURES), str(room)],
        capture_output=True, text=True, check=True, cwd=REPO, env=env,
    )  # fmt: skip
    assert result.stdout.strip() == ""
    assert not (room / "errors.log").exists() or not (room / "errors.log").read_text()


def test_send_loads_no_more_than_it_needs(tmp_path: Path) -> None:
    """``agent-room send`` starts every delivery: no ``re``, ``json``, ``enum``, and
    ``sqlite3``'s C module without the package (its datetime adapters, datetime)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_ROOM_")}
    env["AGENT_ROOM_HOME"] = str(tmp_path / "room")
    for name in ("backend", "frontend"):  # the room as a user makes it
        subprocess.run(
            [sys.executable, "-m", "agent_room", "join", name],
            capture_output=True, check=True, cwd=REPO, env=env,
        )  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", SEND, str(tmp_path / "room")],
        capture_output=True, text=True, check=True, cwd=REPO, env=env,
    )  # fmt: skip
    message_id, *loaded = result.stdout.split()
    assert message_id.isdigit()
    assert loaded == []


PROCESS = "import sys; from agent_room.cli import main; sys.exit(main())"
"""What an installed ``agent-room`` runs (the console script, less the installer's lines)."""
NEVER = {
    *("enum", "re", "json", "typing", "datetime", "collections.abc", "sqlite3"),
    *("contextlib", "dataclasses", "pathlib", "inspect", "subprocess", "pydantic"),
}
"""Standard modules no hook loads (``_sqlite3`` itself brings ``functools``)."""
NOT_ON_A_TURN = {
    *("agent_room.core.enums", "agent_room.turn.procfs", "agent_room.adapters.processes"),
    *(
        "agent_room.turn.core.peer_prompt",
        "agent_room.turn.core.format",
        "agent_room.turn.core.printable",
    ),
}
"""What a turn of a registered session does not need: an enum, its process (gathered at
registration), a peer's wrapper (for a typed prompt), the messages' format (none due),
the error log's escaping (nothing goes wrong)."""
TYPED = {"agent_room.turn.room.delivery"}
"""Nor a typed prompt the receipts of a nudge."""


def _loaded(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> set[str]:
    """The modules a fresh process loads (``-X importtime``); fails unless it exits 0."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        input=stdin, capture_output=True, check=True, cwd=REPO, env=env,
    )  # fmt: skip
    lines = result.stderr.decode().splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


def test_a_hook_process_loads_only_what_its_event_needs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_ROOM_", "PYTHON"))}
    env |= {"AGENT_ROOM_HOME": str(tmp_path / "room"), "AGENT_ROOM_NAME": "backend"}
    bare = _loaded(["-c", "pass"], env)
    events = [
        ("SessionStart", "hook-SessionStart-startup.json"),
        ("UserPromptSubmit", "hook-UserPromptSubmit.json"),
        ("Stop", "hook-Stop.json"),
        ("SessionEnd", "hook-SessionEnd-other.json"),
    ]
    for event, fixture in events:
        stdin = (FIXTURES / fixture).read_bytes()
        loaded = _loaded(["-c", PROCESS, "hook", event], env, stdin) - bare
        assert "agent_room.turn.hooks.handlers" in loaded, event  # it did run
        assert loaded & NEVER == set(), event
        if event != "SessionStart":
            assert loaded & NOT_ON_A_TURN == set(), event
        if event == "UserPromptSubmit":
            assert loaded & TYPED == set()
    assert not (tmp_path / "room" / "errors.log").exists()


def test_a_hook_called_in_process_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the process's own command line ends the process at once (``cli._exit_now``)."""
    from agent_room.cli import main

    monkeypatch.setenv("AGENT_ROOM_HOME", str(tmp_path / "room"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}")))
    assert main(["hook", "SessionEnd"]) == 0  # (an empty payload: logged in the room)
    assert "payload has no session_id" in one_logged_line(tmp_path / "room")
    assert only_the_log_beside(tmp_path / "room")  # no room made for a payload refused


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_fastjson_writes_and_reads_as_json_does(value: object) -> None:
    for ascii_only in (True, False):
        text = json.dumps(value, ensure_ascii=ascii_only)
        assert fastjson.dumps(value, ensure_ascii=ascii_only) == text
        assert fastjson.loads(f" {text}\n") == json.loads(text)
        assert fastjson.loads(text.encode()) == json.loads(text.encode())


@given(st.text(alphabet='{}[]":,0123456789 \\\n\tabcdefnlrstu.-+eE', max_size=30))
def test_fastjson_refuses_what_json_refuses(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        try:
            fastjson.loads(text)
        except ValueError:
            return
        raise AssertionError(f"{text!r} accepted") from None
    assert fastjson.loads(text) == expected


def _regex_nudge_ids(text: str) -> tuple[int, ...]:
    import re

    found = re.search(r"\(((?:#\d+\s*)+)\)\s*$", text)
    return tuple(int(i) for i in re.findall(r"\d+", found.group(1))) if found else ()


def _regex_link_peer(text: str) -> str | None:
    import re

    found = re.match(r"^\[From @([a-z0-9][a-z0-9_-]{0,31})\]", text)
    return found.group(1) if found else None


ids_text = st.text(alphabet="#()0123456789 \t٣x[]", max_size=20)


@given(ids_text)
def test_nudge_ids_read_as_the_pattern_did(tail: str) -> None:
    text = ("[agent-room] 2 new messages from @a " + tail).strip()
    assert nudge_ids(text) == _regex_nudge_ids(text)


@given(st.text(alphabet="[]From @abz09_-X", max_size=40))
def test_link_input_is_read_as_the_pattern_did(text: str) -> None:
    assert link_peer(text) == _regex_link_peer(text)
    assert link_peer("[From @" + text) == _regex_link_peer("[From @" + text)


def test_the_default_checkpoints_need_no_pattern() -> None:
    for prompt in ("[agent-room checkpoint] save", "ANCHOR: x", "CHECK: y", "WAIT: z"):
        assert classify(prompt).kind is PromptKind.CHECKPOINT
        assert classify(prompt, tuple(DEFAULT_CHECKPOINT_PATTERNS)).kind is PromptKind.CHECKPOINT
    assert classify("WAITING: z").kind is PromptKind.HUMAN
    assert classify("ask: x", (r"^ask:",)).kind is PromptKind.CHECKPOINT
