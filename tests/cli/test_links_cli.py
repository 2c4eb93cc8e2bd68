"""The link and timer commands as processes: output, exit codes, one-line errors."""

from __future__ import annotations

import json

import pytest

from agent_room.room.service import Room
from tests.conftest import Cli


@pytest.fixture
def pair(room: Room) -> Room:
    """Two agent sessions, @a and @b, as their hooks would register them."""
    for name in ("a", "b"):
        room.store.register(
            {"session_id": f"s-{name}", "state": "idle"},
            wanted=name,
            explicit=True,
            at=room.clock(),
            alive=lambda *_: True,
        )
    return room


def one_line_error(err: str) -> None:
    assert err.count("\n") == 1
    assert err.startswith("agent-room: ")
    assert "Traceback" not in err


def test_send_link_opens_then_reuses(cli: Cli, pair: Room) -> None:
    opened = cli("send", "@b", "what does X cost?", "--link", name="a")
    assert opened.code == 0, opened.err
    assert "on link #1 (opened; 8 crossings left)" in opened.err
    assert pair.store.message(int(opened.out))["link_id"] == 1  # type: ignore[index]
    again = cli("send", "@b", "--link", "and", "Y?", name="a")
    assert "on link #1 (reused (open); 8 crossings left)" in again.err
    assert pair.store.message(int(again.out))["body"] == "and Y?"  # type: ignore[index]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--link", "--close-link"), "give one"),
        (("--link", "--handover"), "a handover cannot open or close a link"),
    ],
)
def test_conflicting_flags_are_refused(
    cli: Cli, pair: Room, args: tuple[str, ...], message: str
) -> None:
    result = cli("send", "@b", "hi", *args, name="a")
    assert result.code == 2
    assert message in result.err
    one_line_error(result.err)
    assert pair.store.history(10) == []


def test_a_responder_cannot_close(cli: Cli, pair: Room) -> None:
    cli("send", "@b", "go", "--link", name="a")
    refused = cli("send", "@a", "bye", "--close-link", name="b")
    assert refused.code == 1
    assert "only the initiator @a can close link #1" in refused.err
    one_line_error(refused.err)
    assert cli("link", "close", "1", name="b").code == 1
    closed = cli("send", "@b", "done, thanks", "--close-link", name="a")
    assert closed.code == 0, closed.err
    assert "link #1 is closed" in closed.err
    listed = json.loads(cli("links", "--json").out)
    assert (listed[0]["state"], listed[0]["close_reason"]) == ("closed", "closed by @a")


def test_links_and_operator_commands(cli: Cli, pair: Room) -> None:
    cli("send", "@b", "go", "--link", name="a")
    table = cli("links").out.splitlines()
    assert table[0].split() == [
        "ID",
        "STATE",
        "INITIATOR",
        "RESPONDER",
        "LEFT",
        "HELD",
        "AGE",
        "NOTE",
    ]
    assert table[1].split()[:6] == ["#1", "open", "@a", "@b", "8/8", "0"]
    assert cli("link", "freeze", "1").code == 0
    assert "frozen by the operator" in cli("links").out
    assert cli("link", "thaw", "1").code == 0
    missing = cli("link", "freeze", "99")
    assert (missing.code, missing.err.strip()) == (1, "agent-room: no link #99")
    assert cli("link", "thaw", "x").code == 2
    assert cli("link").code == 2
    assert cli("link", "close", "1").code == 0
    assert cli("links", "--live").err.strip() == "no links"


def test_who_shows_links_and_the_anchoring_flag(cli: Cli, pair: Room) -> None:
    cli("send", "@b", "go", "--link", name="a")
    assert cli("timer", "anchor", "5m", "back", "to", "task", "3", name="a").code == 0
    text = cli("who").out
    assert "#1 to @b" in text
    assert "#1 from @a, no anchor!" in text
    rows = {r["name"]: r for r in json.loads(cli("who", "--json").out)}
    assert rows["a"]["unanchored"] is False
    assert rows["b"]["unanchored"] is True
    assert rows["b"]["links"][0]["role"] == "responder"


def test_timers(cli: Cli, pair: Room) -> None:
    made = cli("timer", "wait", "90s", "did @b answer?", name="a")
    assert made.code == 0, made.err
    assert "timer #1 (wait) for @a fires in 1m30s" in made.err
    assert "WAIT" in cli("timers").out
    [row] = json.loads(cli("timers", "--json").out)
    assert (row["name"], row["intent"], row["text"]) == ("a", "wait", "did @b answer?")
    refused = cli("timer", "cancel", "1", name="b")
    assert (refused.code, refused.err.strip()) == (1, "agent-room: timer #1 belongs to @a")
    assert cli("timer", "cancel", "1", name="a").code == 0
    assert cli("timers").err.strip() == "no timers"
    assert "cancelled" in cli("timers", "--all").out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("timer", "anchor", "5x", "text"), "invalid duration '5x'"),
        (("timer", "anchor", "0s", "text"), "more than zero"),
        (("timer", "remind", "5m", "text"), "invalid choice"),
        (("timer", "anchor", "5m"), "Missing argument"),
        (("link", "settings", "--checkpoint-pattern", "(x"), "invalid checkpoint pattern"),
        (("link", "settings", "--loop", "often"), "invalid loop breaker"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    cli: Cli, pair: Room, args: tuple[str, ...], message: str
) -> None:
    result = cli(*args, name="a")
    assert result.code == 2, result.err
    assert message in result.err
    one_line_error(result.err)


def test_settings(cli: Cli, pair: Room) -> None:
    shown = cli(
        "link", "settings", "--budget", "3", "--loop", "4/30", "--checkpoint-pattern", "^HB"
    )
    assert shown.code == 0, shown.err
    assert shown.out.splitlines() == [
        "budget: 3 crossings per link (set when a link opens)",
        "budget window: 1h (a pair's next link inherits what its last one left)",
        "loop breaker: 4/30s",
        "sever grace: 30s (an ended session may resume meanwhile)",
        "checkpoint pattern: ^HB",
    ]
    assert (
        "on link #1 (opened; 3 crossings left)" in cli("send", "@b", "go", "--link", name="a").err
    )
    back = json.loads(cli("link", "settings", "--default-patterns", "--json").out)
    assert back["checkpoint_patterns"][0] == r"^\[agent-room checkpoint\]"
    assert "loop breaker: off" in cli("link", "settings", "--loop", "off").out


def test_a_spent_pair_budget_and_the_operators_grant(cli: Cli, pair: Room) -> None:
    from tests.room.test_links import ping_pong

    assert cli("link", "settings", "--budget", "2", "--budget-window", "30m").code == 0
    assert cli("send", "@b", "go", "--link", name="a").code == 0
    ping_pong(pair, 2)
    again = cli("send", "@b", "more?", "--link", name="a")
    assert again.code == 1
    one_line_error(again.err)
    assert "the turn budget between @a and @b is spent" in again.err
    assert "closed less than 30m ago" in again.err
    refused = cli("link", "grant", "1", "3", name="a")
    assert (refused.code, refused.err.strip()) == (
        1,
        "agent-room: only the operator can grant link #1 more crossings",
    )
    granted = cli("link", "grant", "#1", "3")
    assert granted.code == 0, granted.err
    assert "the next link between @a and @b within the budget window starts with 3" in granted.err
    reopened = cli("send", "@b", "more?", "--link", name="a")
    assert "on link #2 (opened; 3 crossings left)" in reopened.err
    assert "budget window: off" in cli("link", "settings", "--budget-window", "0").out
