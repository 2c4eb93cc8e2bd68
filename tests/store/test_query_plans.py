"""The room's recurring passes never scan the whole message history.

The deliverer, the injector and the console's reader ask their questions on every pass;
on a room with a long history a full scan of ``messages`` per session (or per link) is
what makes a pass take seconds. SQLite's planner assumes large tables when it has no
statistics, so the plans checked here are those of a big room.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import pytest

from agent_room.room.snapshot import SnapshotReader
from agent_room.store.links import LinkStore
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.injector import Injector
from tests.fakes import FakeMux
from tests.ui.seed import AliveProbe, seed_room

FULL_SCAN = re.compile(r"^SCAN (messages|m)\b(?! USING)")


def full_scans(db: Path, asked: Iterable[str], pattern: re.Pattern[str]) -> set[tuple[str, str]]:
    """The statements of ``asked`` whose plan on ``db`` has a step matching ``pattern``
    (a full scan of a table that grows), with that step."""
    plain = sqlite3.connect(db)
    try:
        return {
            (detail, sql[:120])
            for sql in asked
            for *_ids, detail in plain.execute(f"EXPLAIN QUERY PLAN {sql}")
            if pattern.match(detail)
        }
    finally:
        plain.close()


pytestmark = pytest.mark.sqlite


def test_no_pass_scans_the_messages(room_home: Path) -> None:
    room, _clock = seed_room(room_home)
    statements: list[str] = []
    room.store.conn.set_trace_callback(statements.append)
    Deliverer(room, FakeMux(), AliveProbe()).run_once()
    Injector(room, AliveProbe()).run_once()
    SnapshotReader(room).read()
    LinkStore(room.store).delivered_between("frontend", 0.0, 1e12)
    room.store.conn.set_trace_callback(None)
    asked = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "UPDATE"))]
    assert any("status = 'queued'" in s for s in asked)  # the deliverer's question was asked

    assert full_scans(room_home / "room.db", asked, FULL_SCAN) == set()
