"""Delivery state of the SQLite store: the deliverer's lease, typed nudges, held notes.

Mixed into ``SqliteStore``. The lease makes one deliverer active per room; a nudge is
recorded before it is typed, so a stand-by that takes over knows what is in flight.
"""

from __future__ import annotations

from agent_room.turn.core import fastjson
from agent_room.turn.core.budgets import ROOM_BUDGET
from agent_room.turn.store.db import count_change, write_transaction
from agent_room.turn.store.sqlite_base import StoreBase, event, rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agent_room.turn.store.port import Connection
    from agent_room.turn.store.sqlite_base import Row


MAX_NUDGES = 3
"""Nudges per message at most: a failed delivery is nudged again once the recipient is
healthy, until a message has had this many; then its failure is final."""
_OVER_BUDGET = (
    "SELECT m.scope FROM budget_marks m JOIN budgets b ON b.scope = m.scope"
    " WHERE m.level >= 100 AND m.scope IN ($1, $2) AND m.span_start <= $3"
    " AND m.span_start + b.span > $4 ORDER BY m.scope LIMIT 1"
)


def answered(nudged: Sequence[int], queued: Sequence[int]) -> bool:
    """Whether a nudge is answered: none of the messages it named is queued any more
    (receipted by the turn it started, handed over at a Stop, read from the inbox)."""
    return not set(nudged) & set(queued)


DELIVERER_LEASE = "deliverer"
"""The lease the room's active deliverer holds (one per host on PostgreSQL)."""


def deliverer_lease(store: StoreBase) -> str:
    """The lease of the room's deliverer; on PostgreSQL one per host, so that each
    host's watcher types into its own host's panes and no other."""
    if store.engine == "postgresql":
        return f"{DELIVERER_LEASE}@{store.host}"
    return DELIVERER_LEASE


class DeliveryStore(StoreBase):
    """Lease, nudges and notes."""

    def over_budget(self, name: str, now: float) -> str | None:
        """The spent budget that holds ``name``'s prompts now (its own, or the room's
        ``ROOM_BUDGET``), None when none does: then the room sends it nothing of its own
        (nudges, crossings, timers) until the operator raises the budget."""
        found = self.conn.execute(_OVER_BUDGET, (name, ROOM_BUDGET, now, now)).fetchone()
        return str(found[0]) if found else None

    def acquire_lease(
        self,
        name: str,
        *,
        holder: str,
        pid: int,
        pid_start: int | None,
        ttl: float,
        at: float,
        alive: Callable[[int, int | None], bool],
    ) -> bool:
        """Take or renew the lease ``name``; False while another live holder has it.

        A renewal by the holder leaves the room's change count alone: it changes nothing
        anyone shows (see ``write_transaction``); a new holder moves it."""
        with write_transaction(self.conn, bookkeeping=True) as conn:
            row = conn.execute("SELECT * FROM leases WHERE name = $1", (name,)).fetchone()
            free = (
                row is None
                or row["holder"] == holder
                or row["expires_at"] < at
                or (
                    row["pid"] is not None
                    and (row["host"] or self.host) == self.host  # judged on its own host
                    and not alive(row["pid"], row["pid_start"])
                )
            )
            if not free:
                return False
            conn.execute(
                "INSERT INTO leases (name, holder, pid, pid_start, expires_at, host)"
                " VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT(name) DO UPDATE SET holder ="
                " excluded.holder,"
                " pid = excluded.pid, pid_start = excluded.pid_start,"
                " expires_at = excluded.expires_at, host = excluded.host",
                (name, holder, pid, pid_start, at + ttl, self.host),
            )
            if row is None or row["holder"] != holder:
                event(conn, at, "deliverer.lease", "room", name, data={"holder": holder})
                count_change(conn)
            return True

    def lease(self, name: str) -> Row | None:
        """The current holder of a lease."""
        row = self.conn.execute("SELECT * FROM leases WHERE name = $1", (name,)).fetchone()
        return dict(row) if row else None

    def release_lease(self, name: str, holder: str) -> None:
        """Give the lease up (on a clean exit): a stand-by takes it at its next look."""
        with write_transaction(self.conn) as conn:
            conn.execute("DELETE FROM leases WHERE name = $1 AND holder = $2", (name, holder))

    def delivery_targets(self) -> list[Row]:
        """Sessions holding a name with queued messages, an open nudge, or failed
        messages that may still be nudged again."""

        return rows(
            self.conn.execute(
                "SELECT s.* FROM sessions s WHERE s.left_at IS NULL"
                " AND coalesce(s.host, $1) = $2 AND ("
                " EXISTS (SELECT 1 FROM messages m WHERE m.recipient = s.name"
                "  AND m.status = 'queued')"
                " OR EXISTS (SELECT 1 FROM nudges n WHERE n.recipient = s.name"
                "  AND n.state = 'open')"
                " OR EXISTS (SELECT 1 FROM messages m WHERE m.recipient = s.name"
                "  AND m.read_at IS NULL AND m.status = 'failed' AND m.attempts < $3))",
                (self.host, self.host, MAX_NUDGES),
            )
        )

    def retryable_failures(self, recipient: str) -> list[Row]:
        """``recipient``'s failed messages that may still be nudged again, oldest first."""

        return rows(
            self.conn.execute(
                "SELECT id, sender, attempts, coalesce(failed_at, 0) AS failed_at"
                " FROM messages WHERE recipient = $1 AND read_at IS NULL AND status = 'failed'"
                " AND attempts < $2 ORDER BY id",
                (recipient, MAX_NUDGES),
            )
        )

    def open_nudge(self, recipient: str) -> Row | None:
        """The nudge typed for ``recipient`` and not yet receipted, if any."""
        row = self.conn.execute(
            "SELECT * FROM nudges WHERE recipient = $1 AND state = 'open' ORDER BY id DESC",
            (recipient,),
        ).fetchone()
        if row is None:
            return None
        found = dict(row)
        found["message_ids"] = tuple(fastjson.loads(found["message_ids"]))
        return found

    def record_nudge(
        self, recipient: str, session_id: str | None, ids: Sequence[int], text: str, *, at: float
    ) -> int:
        """Record a nudge about to be typed (before typing: a stand-by sees it in flight).

        Failed messages it names are queued again: their retry is this nudge."""
        import json

        with write_transaction(self.conn) as conn:
            conn.execute(
                "UPDATE nudges SET state = 'replaced' WHERE recipient = $1 AND state = 'open'",
                (recipient,),
            )
            nudge_id = conn.execute(
                "INSERT INTO nudges (recipient, session_id, message_ids, text, at, last_try)"
                " VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
                (recipient, session_id, json.dumps(list(ids)), text, at, at),
            ).fetchone()[0]
            for message_id in ids:
                retried = conn.execute(
                    "UPDATE messages SET status = 'queued', failure = NULL, failed_at = NULL"
                    " WHERE id = $1 AND status = 'failed' RETURNING attempts + 1",
                    (message_id,),
                ).fetchone()
                conn.execute(
                    "UPDATE messages SET attempts = attempts + 1 WHERE id = $1", (message_id,)
                )
                if retried is not None:
                    data = {"attempt": retried[0]}
                    event(conn, at, "message.retried", "room", recipient, message_id, data)
            event(conn, at, "delivery.nudged", "room", recipient, data={"ids": list(ids)})
            return int(nudge_id)

    def nudge_retried(self, nudge_id: int, *, at: float) -> None:
        """Count one more Enter (or retype) for a nudge, once it was made."""
        with write_transaction(self.conn) as conn:
            conn.execute(
                "UPDATE nudges SET enters = enters + 1, last_try = $1 WHERE id = $2", (at, nudge_id)
            )

    def close_nudge(self, nudge_id: int, state: str) -> None:
        """Close a nudge: ``done`` once receipted."""
        with write_transaction(self.conn) as conn:
            conn.execute("UPDATE nudges SET state = $1 WHERE id = $2", (state, nudge_id))

    def close_answered(self, conn: Connection, recipient: str) -> None:
        """Close, in the caller's transaction, the open nudge of ``recipient`` that is
        answered (``answered``): the receipt that answers it closes it, so the deliverer
        has nothing left to write for it."""
        nudge = self.open_nudge(recipient)
        if nudge is None:
            return
        queued = conn.execute(
            "SELECT id FROM messages WHERE recipient = $1 AND status = 'queued'", (recipient,)
        ).fetchall()
        if answered(nudge["message_ids"], [row[0] for row in queued]):
            conn.execute("UPDATE nudges SET state = 'done' WHERE id = $1", (nudge["id"],))

    def fail_nudge(
        self,
        nudge_id: int,
        ids: Sequence[int],
        reason: str,
        *,
        at: float,
    ) -> None:
        """Give up on a nudge: its still-queued messages are marked failed, with the reason;
        those nudged ``MAX_NUDGES`` times are failed for good, the others retried later."""

        with write_transaction(self.conn) as conn:
            conn.execute("UPDATE nudges SET state = 'failed' WHERE id = $1", (nudge_id,))
            for message_id in ids:
                row = conn.execute(
                    "SELECT attempts FROM messages WHERE id = $1 AND status = 'queued'",
                    (message_id,),
                ).fetchone()
                if row is None:
                    continue
                final = row[0] >= MAX_NUDGES
                failure = reason + (
                    f"; gave up after {row[0]} nudges"
                    if final
                    else "; nudged again once the agent is ready"
                )
                conn.execute(
                    "UPDATE messages SET status = 'failed', failure = $1, failed_at = $2"
                    " WHERE id = $3",
                    (failure, at, message_id),
                )
                data = {"reason": reason, "attempts": row[0], "final": final}
                event(conn, at, "message.failed", "room", None, message_id, data)

    def set_note(self, name: str, note: str, *, at: float) -> None:
        """Say why ``name``'s messages wait (empty: they do not); written only on change."""
        current = self.conn.execute(
            "SELECT note FROM delivery_notes WHERE name = $1", (name,)
        ).fetchone()
        if (current[0] if current else "") == note:
            return
        with write_transaction(self.conn) as conn:
            if note:
                conn.execute(
                    "INSERT INTO delivery_notes (name, note, at) VALUES ($1,$2,$3)"
                    " ON CONFLICT(name) DO UPDATE SET note = excluded.note, at = excluded.at",
                    (name, note, at),
                )
            else:
                conn.execute("DELETE FROM delivery_notes WHERE name = $1", (name,))

    def notes(self) -> dict[str, str]:
        """Why each recipient's messages wait."""
        return {
            row[0]: row[1]
            for row in self.conn.execute("SELECT name, note FROM delivery_notes").fetchall()
        }
