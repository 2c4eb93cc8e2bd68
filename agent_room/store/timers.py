"""Timers with intent, and what links and timers share: room messages in a transaction.

Not mixed into ``SqliteStore``: the hooks import that class on every turn and never need
any of this, so it is a separate class over the same connection. Firing is a compare
and set, so two injectors racing fire a timer once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.port import Connection
from agent_room.turn.store.sqlite_base import event, rows
from agent_room.turn.store.view import StoreView

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agent_room.turn.store.sqlite_base import Row

    Notices = Sequence[tuple[str, str]]
    """(recipient, body) of system messages the room sends with a change."""

ROOM = "room"


class TimerStore(StoreView):
    """Timer state of one room, on the connection of a ``SqliteStore``."""

    def _message(
        self,
        conn: Connection,
        kind: str,
        sender: str,
        recipient: str,
        body: str,
        at: float,
        *,
        status: str = "queued",
        link_id: int | None = None,
    ) -> int:
        return self.store._insert_message(
            conn, kind, sender, recipient, body, at, status, None, link_id
        )

    def _notify(self, conn: Connection, notices: Notices, at: float, link_id: int | None) -> None:
        for recipient, body in notices:
            self._message(conn, "system", ROOM, recipient, body, at, link_id=link_id)

    # -- timers -----------------------------------------------------------------------

    def add_timer(
        self,
        name: str,
        session_id: str | None,
        intent: str,
        text: str,
        *,
        at: float,
        due: float,
    ) -> int:
        """Record a timer; return its id."""
        with write_transaction(self.conn) as conn:
            timer_id = conn.execute(
                "INSERT INTO timers (name, session_id, intent, text, created_at, due_at)"
                " VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
                (name, session_id, intent, text, at, due),
            ).fetchone()[0]
            event(
                conn,
                at,
                "timer.set",
                name,
                name,
                data={"timer": timer_id, "intent": intent, "due": due},
            )
            return int(timer_id)

    def timer(self, timer_id: int) -> Row | None:
        """One timer by id."""
        row = self.conn.execute("SELECT * FROM timers WHERE id = $1", (timer_id,)).fetchone()
        return dict(row) if row else None

    def timers(self, *, pending_only: bool = True, limit: int = 200) -> list[Row]:
        """Timers, the next due first (pending), or the newest first (all)."""
        if pending_only:
            query = "SELECT * FROM timers WHERE state = 'pending' ORDER BY due_at, id LIMIT $1"
        else:
            query = "SELECT * FROM timers ORDER BY id DESC LIMIT $1"
        return rows(self.conn.execute(query, (limit,)))

    def next_due(self) -> float | None:
        """When the next pending timer is due."""
        row = self.conn.execute("SELECT min(due_at) FROM timers WHERE state = 'pending'").fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def due_timers(self, now: float) -> list[Row]:
        """Pending timers due at ``now``."""
        return rows(
            self.conn.execute(
                "SELECT * FROM timers WHERE state = 'pending' AND due_at <= $1 ORDER BY due_at, id",
                (now,),
            )
        )

    def fire_timer(self, timer_id: int, body: str, *, at: float) -> int | None:
        """Fire a pending timer: its message goes to the agent. None if fired already."""
        with write_transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT name FROM timers WHERE id = $1 AND state = 'pending'", (timer_id,)
            ).fetchone()
            if row is None:
                return None
            message_id = self._message(conn, "system", ROOM, row["name"], body, at)
            conn.execute(
                "UPDATE timers SET state = 'fired', fired_at = $1, message_id = $2 WHERE id = $3",
                (at, message_id, timer_id),
            )
            event(conn, at, "timer.fired", ROOM, row["name"], message_id, {"timer": timer_id})
            return message_id

    def cancel_timer(self, timer_id: int, *, at: float, by: str) -> bool:
        """Cancel a pending timer; False if it is no longer pending."""
        with write_transaction(self.conn) as conn:
            cursor = conn.execute(
                "UPDATE timers SET state = 'cancelled', fired_at = $1 WHERE id = $2"
                " AND state = 'pending'",
                (at, timer_id),
            )
            if cursor.rowcount:
                event(conn, at, "timer.cancelled", by, None, data={"timer": timer_id})
            return cursor.rowcount == 1

    def anchored_names(self) -> set[str]:
        """Names with a pending anchor timer."""
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT name FROM timers WHERE state = 'pending' AND intent = 'anchor'"
            ).fetchall()
        }

    def last_output(self, session_id: str) -> Row | None:
        """The final output of a session's last finished turn that had one, and when."""
        row = self.conn.execute(
            "SELECT output, stopped_at FROM turns WHERE session_id = $1 AND stopped_at IS NOT NULL"
            " AND output IS NOT NULL AND output != '' ORDER BY id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return dict(row) if row else None
