"""The loop breaker from the command line: a held send says so, who/history/loops show what
is held, and only the operator releases it."""

from __future__ import annotations

import json

from agent_room.room.service import Room
from tests.conftest import Cli


def test_a_loop_is_held_shown_and_released(cli: Cli, room: Room) -> None:
    for name in ("a", "b"):
        assert cli("join", name).code == 0
    assert cli("loops", "settings", "--threshold", "3/60").out.startswith("loop breaker: 3/60s")
    for n in range(5):
        sender, recipient = ("a", "b") if n % 2 == 0 else ("b", "a")
        sent = cli("send", f"@{recipient}", f"reply {n}", name=sender)
        assert sent.code == 0, sent.err
    assert "queued for @b" in sent.err  # the 5th: a -> b, 3 of them
    held = cli("send", "@a", "reply 5", name="b")  # b -> a: the 3rd closes the loop
    assert held.code == 0
    assert f"message #{held.out.strip()} is held, not delivered" in held.err
    assert "@b → @a → @b (loop #1)" in held.err

    who = {r["name"]: r for r in json.loads(cli("who", "--json").out)}
    assert who["a"]["held"] == 1
    assert "(1 held)" in cli("who").out
    last = cli("history", "1").out
    assert "delivery: held (held by the loop breaker: loop #1 @b → @a → @b;" in last
    listed = cli("loops")
    assert listed.out.startswith("#1  HOLDING 1  @b → @a → @b  1 caught")
    [hold] = json.loads(cli("loops", "--json").out)
    assert (hold["cycle"], hold["held"]) == (["b", "a", "b"], 1)

    refused = cli("loops", "release", "1", name="a")
    assert (refused.code, refused.err.strip()) == (
        1,
        "agent-room: only the operator can release loop #1",
    )
    released = cli("loops", "release", "#1")
    assert released.code == 0, released.err
    assert "1 held messages released for delivery" in released.err
    assert "reply 5" in cli("inbox", name="a").out
    assert cli("loops", "--active").err.strip() == "no loops held"
    assert cli("loops", "settings", "--threshold", "off").out.splitlines()[0] == "loop breaker: off"
    bad = cli("loops", "settings", "--threshold", "often")
    assert bad.code == 2
    assert bad.err.startswith("agent-room: invalid loop breaker 'often'")


def test_the_turn_breakers_limits_are_shown_and_changed(cli: Cli) -> None:
    shown = cli("loops", "settings").out.splitlines()
    assert shown[1] == (
        "turn breaker: 60 per agent and 16 per pair within 300s (turns the room caused)"
    )
    changed = cli("loops", "settings", "--turns", "10/0/60", "--json")
    assert json.loads(changed.out)["turns_per_agent"] == 10
    assert json.loads(changed.out)["turns_per_pair"] == 0
    assert "turn breaker: off" in cli("loops", "settings", "--turns", "off").out
    bad = cli("loops", "settings", "--turns", "10/x")
    assert (bad.code, bad.err.count("\n")) == (2, 1)
    assert bad.err.startswith("agent-room: invalid turn breaker '10/x'")
    assert cli("loops", "settings").out.count("turn breaker: off") == 1
