"""Audit event data is JSON written by SQLite: it must read back as what was written."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent_room.turn.store.db import RoomConnection
from agent_room.turn.store.sqlite_base import event

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
DATA = st.dictionaries(
    st.text(max_size=12), st.one_of(SCALARS, st.lists(SCALARS, max_size=4)), max_size=5
)


@given(DATA)
def test_event_data_reads_back_as_written(data: dict[str, Any]) -> None:
    import json

    conn = sqlite3.connect(":memory:", factory=RoomConnection)
    conn.execute(
        "CREATE TABLE events (id INTEGER PRIMARY KEY, at REAL, kind TEXT, actor TEXT,"
        " subject TEXT, message_id INTEGER, data TEXT)"
    )
    event(conn, 1.0, "test.kind", "room", data=data)
    (stored,) = conn.execute("SELECT data FROM events").fetchone()
    assert json.loads(stored) == data
