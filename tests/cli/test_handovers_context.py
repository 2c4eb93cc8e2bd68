"""The operator sees a handover's prepared context from the command line before deciding,
as the console's preview shows it: ``handovers``, ``handovers --json``, ``handovers show``."""

from __future__ import annotations

import json
from pathlib import Path

from agent_room.core.memory import Context
from agent_room.room.service import Room
from agent_room.store import memory
from tests.conftest import Cli

CONTEXT = "## Context from @api's session\n\n### Files changed\n- api/orders_total_7q.py\n"


def _handover_with_context(cli: Cli, room_home: Path) -> int:
    assert cli("join", "api").code == cli("join", "web").code == 0
    fields = ("--changed", "GET /tasks", "--todo", "the list view")
    sent = cli("send", "@web", "--handover", *fields, name="api")
    assert sent.code == 0, sent.err
    handover = int(sent.out)
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        memory.save_context(
            room.store,
            handover,
            session_id="sess-api",
            context=Context(CONTEXT, 20, 1, 1),
            problem=None,
            at=0.0,
        )
    finally:
        room.close()
    return handover


def test_the_context_is_shown_before_approval(cli: Cli, room_home: Path) -> None:
    handover = _handover_with_context(cli, room_home)

    (row,) = json.loads(cli("handovers", "--json").out)
    assert row["context"] == CONTEXT

    listed = cli("handovers").out
    assert f"context: 4 lines (agent-room handovers show {handover})" in listed

    shown = cli("handovers", "show", str(handover))
    assert shown.code == 0, shown.err
    assert "the list view" in shown.out
    assert "context prepared from @api's transcript (20 tokens)" in shown.out
    assert "api/orders_total_7q.py" in shown.out

    missing = cli("handovers", "show", "99")
    assert (missing.code, missing.out) == (1, "")
    assert missing.err == "agent-room: no handover #99\n"
