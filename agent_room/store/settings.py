"""The room's stored settings: what the operator sets for the whole room while it runs
(the links' limits, the transport, prices, the intercom's and memory's choices), one
JSON value per key, seen alike by every process and every host of the room.

Not the room's configuration (``room.conf`` and ``AGENT_ROOM_*``: how to reach the room,
read when a process starts), and not any one feature's store: each feature reads and
writes its keys here.
"""

from __future__ import annotations

import json
from typing import Any

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite_base import event
from agent_room.turn.store.view import StoreView


class SettingsStore(StoreView):
    """The stored settings of one room, on the connection of a ``SqliteStore``."""

    def settings(self) -> dict[str, Any]:
        """The stored settings, decoded (missing keys are the defaults)."""
        return {
            key: json.loads(value)
            for key, value in self.conn.execute("SELECT key, value FROM settings").fetchall()
        }

    def get(self, key: str) -> Any:
        """One stored setting, decoded; None where it is not set (its default)."""
        found = self.conn.execute("SELECT value FROM settings WHERE key = $1", (key,)).fetchone()
        return None if found is None else json.loads(found[0])

    def save(self, values: dict[str, Any], *, at: float, by: str) -> None:
        """Store settings (``None`` removes one: back to its default), with one audit
        event of what changed."""
        with write_transaction(self.conn) as conn:
            for key, value in values.items():
                if value is None:
                    conn.execute("DELETE FROM settings WHERE key = $1", (key,))
                else:
                    conn.execute(
                        "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT(key)"
                        " DO UPDATE SET value = excluded.value",
                        (key, json.dumps(value)),
                    )
            event(conn, at, "settings.changed", by, None, None, values)
