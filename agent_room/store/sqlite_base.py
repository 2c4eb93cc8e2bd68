"""What every part of the SQLite store shares: the connection, rows, audit events."""

from __future__ import annotations

import json
import os
import sqlite3

from agent_room.store.db import connect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_room.store.home import StrPath

    Row = dict[str, Any]
    """A row as the store returns it: column name to value."""


def rows(cursor: sqlite3.Cursor) -> list[Row]:
    """Every row of a cursor as a plain dict."""
    return [dict(row) for row in cursor.fetchall()]


def event(
    conn: sqlite3.Connection,
    at: float,
    kind: str,
    actor: str,
    subject: str | None = None,
    message_id: int | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    """Append one audit event inside the caller's transaction."""
    conn.execute(
        "INSERT INTO events (at, kind, actor, subject, message_id, data) VALUES (?,?,?,?,?,?)",
        (at, kind, actor, subject, message_id, json.dumps(data or {}, separators=(",", ":"))),
    )


class StoreBase:
    """Owns the connection to ``<home>/room.db``."""

    def __init__(self, home: StrPath, *, timeout: float = 10.0) -> None:
        self.conn = connect(home, timeout=timeout)
        self.home = os.fspath(home)

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self.conn.close()
