"""What asks the usage on every pass, send or redraw never scans the whole of it: the
console's cost column, the deliverer's budget check, the loop breaker's cost rate, the
budgets' check and ``usage`` for a span keep to the ``usage`` table's indexes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_room.room.budgets import Budgets
from agent_room.room.snapshot import SnapshotReader
from agent_room.room.usage_report import Reports
from agent_room.turn.store.loops import cost_hold
from agent_room.workers.deliverer import Deliverer
from tests.fakes import FakeMux
from tests.store.test_query_plans import full_scans
from tests.ui.seed import AliveProbe, seed_room

FULL_SCAN = re.compile(r"^SCAN (usage|u)\b(?! USING)")

pytestmark = pytest.mark.sqlite


def test_no_recurring_question_scans_the_usage(room_home: Path) -> None:
    room, clock = seed_room(room_home)
    Budgets(room).set("backend", 5.0)
    Budgets(room).set(None, 50.0)
    statements: list[str] = []
    room.store.conn.set_trace_callback(statements.append)
    SnapshotReader(room).read()
    Deliverer(room, FakeMux(), AliveProbe()).run_once()
    cost_hold(room.store.conn, "backend", "frontend", clock())
    Budgets(room).check()
    for by in ("agent", "model", "link", "day"):
        Reports(room).summary(by, clock() - 3600)
    room.store.conn.set_trace_callback(None)
    asked = [s for s in statements if "usage" in s and s.lstrip().upper().startswith("SELECT")]
    assert len(asked) > 8

    assert full_scans(room_home / "room.db", asked, FULL_SCAN) == set()
