"""Resume modes and retention, as the seed gives them."""

from __future__ import annotations

import pytest

from agent_room.core.checkpoints import (
    PARTIAL_LIMIT,
    check_mode,
    entries,
    expired,
    render,
    select,
)
from agent_room.turn.core.errors import BadInput


def _timeline() -> list:  # type: ignore[type-arg]
    items = [
        {
            "seq": i,
            "kind": "said",
            "text": f"step {i}",
            "at": f"2026-02-12T14:{i // 60:02d}:{i % 60:02d}Z",
        }
        for i in range(1, 120)
    ]
    items.append({"seq": 120, "kind": "command", "text": "agent-room send @web hi", "at": None})
    messages = [
        {
            "id": 1,
            "kind": "chat",
            "sender": "api",
            "recipient": "web",
            "body": "the contract",
            "created_at": 0.0,
            "state": None,
        },
        {
            "id": 2,
            "kind": "handover",
            "sender": "ops",
            "recipient": "api",
            "body": "deploy it",
            "created_at": 1.0,
            "state": "approved",
        },
    ]
    return entries("api", items, messages)


def test_full_partial_and_agent_modes() -> None:
    timeline = _timeline()
    full = select(timeline, "full", None)
    assert len(full) == len(timeline) == 122
    partial = select(timeline, "partial", None)
    assert len(partial) == PARTIAL_LIMIT
    assert partial[-1].text == "- ran: agent-room send @web hi"
    web = select(timeline, "agent", "web")
    assert [e.text for e in web] == [
        "- message to @web: the contract",
        "- ran: agent-room send @web hi",
    ]
    ops = select(timeline, "agent", "ops")
    assert [e.text for e in ops] == ["- handover from @ops (approved): deploy it"]
    text = render(
        {"id": 3, "name": "api", "kind": "manual", "created_at": 0.0, "note": "lunch"},
        ops,
        len(timeline),
        "agent",
    )
    assert text.startswith("## Resuming @api from checkpoint #3 (manual, ")
    assert "Note: lunch" in text
    assert "1 of 122 entries (agent)." in text


def test_modes_are_checked() -> None:
    with pytest.raises(BadInput, match="invalid mode"):
        check_mode("most", None)
    with pytest.raises(BadInput, match="needs --agent"):
        check_mode("agent", None)
    assert check_mode("agent", "web") == "agent"


def test_retention_by_count_and_age() -> None:
    day = 86400.0
    newest_first = [{"id": 20 - i, "created_at": 100 * day - i * day} for i in range(15)]
    assert expired(newest_first, 100 * day) == [10, 9, 8, 7, 6]
    assert sorted(expired(newest_first, 100 * day, keep=10, days=3.5)) == list(range(6, 17))
