"""No message text reaches the operator's terminal as control sequences.

Real ``agent-room`` processes print a room holding hostile text (a body that retitles the
pane, clears the screen, overwrites a line, reorders what is read; a cwd and a timer with
a forged second line): the bytes they write show all of it escaped, while ``--json``
still gives back the exact text.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli, Result
from tests.hooks.conftest import Hook, new_session

HOSTILE = (
    "first line\n\tindented\n"
    "title\x1b]2;pwned\x07 clear\x1b[2J back\roverwrite c1\x9b31m "
    "bidi\u202egnp.exe\u202c iso\u2066x\u2069 marks\u200e\u200f\u061c\n"
)
FORGED = "x\nfrom: operator\x1b[2K\u202e"
ACTED_ON = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
"""What a terminal acts on (the newline and tab of a multi-line body are kept)."""


def _safe(result: Result) -> str:
    assert result.code == 0, result
    for stream in (result.out, result.err):
        assert not ACTED_ON.search(stream), stream
    return result.out


@pytest.fixture
def hostile(cli: Cli) -> Cli:
    assert cli("join", "backend").code == 0
    assert cli("join", "frontend", "--pane", "%7").code == 0
    assert cli("send", "@frontend", name="backend", stdin=HOSTILE).code == 0
    return cli


def test_history_and_inbox_show_the_body_escaped(hostile: Cli) -> None:
    for result in (
        hostile("history"),
        hostile("inbox", "--peek", name="frontend"),
        hostile("inbox", name="frontend"),
    ):
        out = _safe(result)
        assert "\nfirst line\n\tindented\n" in out  # a multi-line body stays multi-line
        assert "title\\x1b]2;pwned\\x07 clear\\x1b[2J back\\roverwrite c1\\x9b31m" in out
        assert "bidi\\u202egnp.exe\\u202c iso\\u2066x\\u2069" in out
        assert "marks\\u200e\\u200f\\u061c\n" in out


def test_json_gives_back_the_exact_body_and_stays_safe(hostile: Cli) -> None:
    for result in (
        hostile("history", "--json"),
        hostile("inbox", "--peek", "--json", name="frontend"),
    ):
        out = _safe(result)
        (message,) = json.loads(out)
        assert message["body"] == HOSTILE


def test_handovers_and_their_fields(hostile: Cli) -> None:
    sent = hostile(
        "send", "@frontend", "--handover", "--todo", FORGED, "--changed", HOSTILE, name="backend"
    )
    assert sent.code == 0, sent
    listed = _safe(hostile("handovers"))
    assert listed.count("\n") == 1
    (pending,) = json.loads(_safe(hostile("handovers", "--json")))
    assert "from: operator\x1b[2K\u202e" in pending["body"]  # the exact text, split in items
    assert "clear\x1b[2J back" in pending["body"]
    history = _safe(hostile("history"))
    assert "from: operator\\x1b[2K\\u202e" in history
    assert "clear\\x1b[2J back" in history
    rejected = hostile("reject", sent.out.strip(), "--reason", FORGED)
    _safe(rejected)
    replies = json.loads(_safe(hostile("inbox", "--json", name="backend")))
    assert any(FORGED in r["body"] for r in replies)
    assert "\\x1b[2K\\u202e" in _safe(hostile("history"))


def test_who_shows_a_hostile_cwd_on_its_one_line(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    hook = Hook(room_home, agent_proc.pid)
    code, _, _ = hook(
        "SessionStart",
        new_session("SessionStart", cwd="/w/" + FORGED),
        env={"AGENT_ROOM_NAME": "backend"},
    )
    assert code == 0
    out = _safe(cli("who"))
    assert len(out.splitlines()) == 2  # the header and one session
    assert "/w/x\\nfrom: operator\\x1b[2K\\u202e" in out
    (row,) = json.loads(_safe(cli("who", "--json")))
    assert row["cwd"] == "/w/" + FORGED
    _safe(cli("tree"))


def test_timers_list_one_per_line(hostile: Cli) -> None:
    text = "check\nfrom: operator\u202e\x9b2J"
    assert hostile("timer", "anchor", "10m", text, name="backend").code == 0
    out = _safe(hostile("timers"))
    assert len(out.splitlines()) == 1
    assert "check\\nfrom: operator\\u202e\\x9b2J" in out
    (timer,) = json.loads(_safe(hostile("timers", "--json")))
    assert timer["text"] == text


def test_errors_name_hostile_input_escaped(hostile: Cli, tmp_path: Path) -> None:
    missing = str(tmp_path / "no\x1b]2;pwned\x07such\u202e")
    result = hostile("send", "@frontend", "--file", missing, name="backend")
    assert result.code != 0
    assert not ACTED_ON.search(result.err)
    assert "no\\x1b]2;pwned\\x07such\\u202e" in result.err
