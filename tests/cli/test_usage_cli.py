"""``usage``, ``budget`` and ``who``'s cost column from the command line, against a room
whose agent's transcript is a real Claude Code record (its times moved to today)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_room.core.usage import DAY, GROUPS, span_start
from agent_room.room.service import Room
from tests.cli.conftest import one_line_error
from tests.conftest import Cli
from tests.prices import listed_price
from tests.room.conftest import register

EXCERPT = (
    Path(__file__).parent.parent
    / "fixtures"
    / "transcripts"
    / "spotter_excerpt_turn_end_compact.jsonl"
)


MARGIN = 120.0
"""Seconds a test of this file takes at most (its commands run as processes, whose
"today" is the wall clock's UTC day)."""


@pytest.fixture
def now() -> float:
    """The test's time, in the same UTC day as every command the test runs: a test that
    would start less than ``MARGIN`` before midnight UTC waits for midnight first."""
    at = time.time()
    left = span_start(at) + DAY - at
    if left < MARGIN:
        time.sleep(left + 1.0)
        at = time.time()
    return at


def _at(now: float) -> str:
    """A minute before ``now``, but not before its UTC day began: a time of today."""
    return datetime.fromtimestamp(max(now - 60, span_start(now)), UTC).isoformat()


def _today(source: Path, target: Path, now: float) -> None:
    """The transcript with every time moved to today, just before ``now`` (the rest
    untouched)."""
    lines = []
    for line in source.read_text().splitlines():
        data = json.loads(line)
        if "timestamp" in data:
            data["timestamp"] = _at(now)
        lines.append(json.dumps(data))
    target.write_text("\n".join(lines) + "\n")


@pytest.fixture
def web(room: Room, tmp_path: Path, now: float) -> Path:
    path = tmp_path / "web.jsonl"
    _today(EXCERPT, path, now)
    register(room, "web", transcript_path=str(path))
    register(room, "api")
    return path


def _expected() -> float:
    parts = [
        ("claude-haiku-4-5-20251001", 3, 514, 138272, 348),
        ("claude-haiku-4-5-20251001", 0, 356, 138620, 2749),
        ("claude-haiku-4-5-20251001", 2, 1, 141369, 416),
        ("claude-opus-4-6", 3, 9, 21448, 23812),
    ]
    return sum(listed_price(*part) for part in parts)


def test_usage_by_agent_and_model_with_the_price_sources_cost(cli: Cli, web: Path) -> None:
    result = cli("usage", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    (line,) = data["lines"]
    assert (line["key"], line["requests"], line["output_tokens"]) == ("web", 4, 880)
    assert line["cost_usd"] == pytest.approx(_expected(), abs=1e-6)
    by_model = json.loads(cli("usage", "--by", "model", "--json").out)
    assert {m["key"] for m in by_model["lines"]} == {"claude-haiku-4-5-20251001", "claude-opus-4-6"}
    table = cli("usage", "--by", "day")
    assert table.out.splitlines()[0].split() == [
        "DAY", "REQUESTS", "INPUT", "OUTPUT", "CACHE-READ", "CACHE-WRITE", "COST",
    ]  # fmt: skip
    assert table.out.splitlines()[-1].startswith("total")
    who = cli("who")
    header, *rows = who.out.splitlines()
    assert "TODAY" in header.split()
    web_row = next(r for r in rows if r.startswith("web "))
    assert f"${_expected():.2f}" in web_row
    (entry,) = [r for r in json.loads(cli("who", "--json").out) if r["name"] == "web"]
    assert entry["cost_today_usd"] == pytest.approx(_expected(), abs=1e-6)
    assert entry["over_budget"] is None


def test_a_budget_spent_shows_in_who_usage_and_to_a_sender(cli: Cli, web: Path) -> None:
    assert cli("budget", "set", "web", "0.01").code == 0
    assert cli("usage").code == 0  # reads the transcript; the budget is spent
    budget = json.loads(cli("budget", "--json").out)
    assert budget[0]["scope"] == "web"
    assert budget[0]["held"] is True
    assert "(over budget)" in next(r for r in cli("who").out.splitlines() if r.startswith("web"))
    assert "@web is over its budget" in cli("usage").err
    sent = cli("send", "@web", "are you there?", name="api")
    assert sent.code == 0
    assert "@web is over its budget: the room holds its prompts" in sent.err
    assert cli("budget", "set", "web", "100").code == 0
    assert "over budget" not in cli("who").out
    assert "over its budget" not in cli("send", "@web", "again", name="api").err


def test_an_unknown_model_has_tokens_and_an_unknown_cost_until_priced(
    cli: Cli, room: Room, tmp_path: Path, now: float
) -> None:
    path = tmp_path / "x.jsonl"
    line = {
        "type": "assistant",
        "timestamp": _at(now),
        "message": {
            "id": "msg_1",
            "model": "house-model-7",
            "usage": {"input_tokens": 1000, "output_tokens": 500},
        },
    }
    path.write_text(json.dumps(line) + "\n")
    register(room, "x", transcript_path=str(path))
    (entry,) = json.loads(cli("usage", "--json").out)["lines"]
    assert (entry["input_tokens"], entry["cost_usd"], entry["unpriced_requests"]) == (1000, None, 1)
    assert "?: a model without a known price" in cli("usage").err
    assert "?" in next(r for r in cli("who").out.splitlines() if r.startswith("x "))
    priced = cli("usage", "price", "house-model-7", "--input", "2", "--output", "10")
    assert priced.code == 0
    assert "1 stored requests repriced" in priced.err
    (entry,) = json.loads(cli("usage", "--json").out)["lines"]
    assert entry["cost_usd"] == pytest.approx((1000 * 2 + 500 * 10) / 1e6)
    assert json.loads(cli("usage", "prices", "--json").out)["house-model-7"]["input"] == 2


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("usage", "--since", "soon"), "agent-room: invalid duration 'soon'"),
        (("usage", "--since", "2026-13-45"), "agent-room: invalid date '2026-13-45'"),
        (("usage", "--by", "colour"), "'colour' is not one of"),
        (("budget", "set", "5"), "agent-room: name an agent, or give --room"),
        (("budget", "set", "web", "-3"), "not an amount of dollars"),
        (("budget", "set", "Bad Name", "3"), "agent-room: "),
        (("budget", "clear", "web"), "agent-room: no budget set for @web"),
        (("budget", "pair", "lots"), "agent-room: invalid rate 'lots'"),
        (("usage", "price", "m", "--input", "1"), "agent-room: a price needs --input and --output"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(
    cli: Cli, args: tuple[str, ...], error: str
) -> None:
    result = cli(*args)
    assert result.code != 0
    assert error in result.err
    assert "Traceback" not in result.err
    assert json.loads(cli("budget", "--json").out or "[]") == []


def test_the_command_line_offers_every_grouping_the_room_sums_by(cli: Cli) -> None:
    shown = cli("usage", "--help")
    assert shown.code == 0
    assert "[" + "|".join(GROUPS) + "]" in "".join(shown.out.split())
    one_line_error(cli("usage", "--by", "colour"), 2, "'colour' is not one of")
