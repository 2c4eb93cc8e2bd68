"""What every part of the SQLite store shares: the connection, rows, audit events."""

from __future__ import annotations

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
    sql, params = json_object(data or {})
    conn.execute(
        "INSERT INTO events (at, kind, actor, subject, message_id, data)"
        f" VALUES (?, ?, ?, ?, ?, {sql})",
        (at, kind, actor, subject, message_id, *params),
    )


def json_object(data: dict[str, Any]) -> tuple[str, list[Any]]:
    """SQL building ``data`` as a JSON object, and its parameters.

    SQLite writes the JSON (``json_object``): the processes that write the most, hooks
    and ``agent-room send``, need not load the ``json`` module for a few flat fields.
    Nested values are encoded by ``json`` and embedded with ``json()``; floats must be
    finite (as in JSON itself).
    """
    parts: list[str] = []
    params: list[Any] = []
    for key, value in data.items():
        if isinstance(value, bool):
            parts.append("?, json(?)")
            params += [key, "true" if value else "false"]
        elif isinstance(value, float):  # SQLite would round it to 15 digits
            parts.append("?, json(?)")
            params += [key, repr(value)]
        elif value is None or isinstance(value, str | int):
            parts.append("?, ?")
            params += [key, value]
        else:
            import json

            parts.append("?, json(?)")
            params += [key, json.dumps(value)]
    return f"json_object({', '.join(parts)})", params


class StoreBase:
    """Owns the connection to ``<home>/room.db``."""

    def __init__(self, home: StrPath, *, timeout: float = 10.0) -> None:
        self.conn = connect(home, timeout=timeout)
        self.home = os.fspath(home)

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self.conn.close()
