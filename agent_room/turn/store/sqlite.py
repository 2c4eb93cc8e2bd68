"""``SqliteStore``: the room's operations over one SQLite database.

Each public method is one transaction and appends its audit events inside it, so the
log and the state never disagree. Rows come back as plain ``dict``s keyed by column.
"""

from __future__ import annotations

from agent_room.turn.core.errors import NotFound
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.delivery import DeliveryStore
from agent_room.turn.store.params import Params
from agent_room.turn.store.sessions import SessionStore
from agent_room.turn.store.sqlite_base import event, rows
from agent_room.turn.store.wake import poke

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agent_room.turn.store.port import Connection
    from agent_room.turn.store.sqlite_base import Row

_MESSAGE_COLUMNS = (
    "m.id, m.kind, m.sender, m.recipient, m.body, m.created_at, m.status, m.delivered_at,"
    " m.read_at, m.failure, m.attempts, m.link_id, m.via, h.state AS handover_state"
)
_MESSAGE_FROM = "messages m LEFT JOIN handovers h ON h.message_id = m.id"
INBOX_STATUSES = ("queued", "delivered", "failed")
"""Messages in these states sit in the recipient's inbox until read."""


def _unread(conn: Connection, name: str) -> list[Row]:
    p = Params()
    return rows(
        conn.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM {_MESSAGE_FROM}"
            f" WHERE m.recipient = {p(name)} AND m.read_at IS NULL"
            f" AND m.status IN ({p.each(INBOX_STATUSES)}) ORDER BY m.id",
            p,
        )
    )


class SqliteStore(SessionStore, DeliveryStore):
    """The room's state in ``<home>/room.db``."""

    # -- members and sessions ---------------------------------------------------------

    def holder(self, name: str) -> Row | None:
        """The session currently holding ``name``, if any."""
        row = self.conn.execute(
            "SELECT * FROM sessions WHERE name = $1 AND left_at IS NULL", (name,)
        ).fetchone()
        return dict(row) if row else None

    def holder_of_pane(self, pane: str) -> Row | None:
        """The most recent session registered for a tmux pane id on this host (pane ids
        are per tmux server: every machine of a room has its own ``%0``)."""
        row = self.conn.execute(
            "SELECT * FROM sessions WHERE pane = $1 AND left_at IS NULL"
            " AND coalesce(host, $2) = $3"
            " ORDER BY (state = 'ended'), updated_at DESC LIMIT 1",
            (pane, self.host, self.host),
        ).fetchone()
        return dict(row) if row else None

    def members(self) -> list[Row]:
        """Every session holding a name, with its unread count, oldest first."""
        p = Params()
        return rows(
            self.conn.execute(
                "SELECT s.*, (SELECT count(*) FROM messages m WHERE m.recipient = s.name"
                f" AND m.read_at IS NULL AND m.status IN ({p.each(INBOX_STATUSES)})) AS unread,"
                " (SELECT count(*) FROM messages m WHERE m.recipient = s.name"
                " AND m.read_at IS NULL AND m.status = 'failed') AS failed"
                " FROM sessions s WHERE s.left_at IS NULL ORDER BY s.started_at, s.rowid",
                p,
            )
        )

    def member_names(self) -> list[str]:
        """The names in the room, sorted."""
        cursor = self.conn.execute("SELECT name FROM sessions WHERE left_at IS NULL ORDER BY name")
        return [row[0] for row in cursor.fetchall()]

    def join(
        self,
        name: str,
        *,
        pane: str | None,
        agent: str,
        at: float,
        tmux_socket: str | None = None,
        pid: int | None = None,
        pid_start: int | None = None,
    ) -> Row:
        """Register ``name`` by hand (seed 004's ``join``), or refresh its pane.

        ``pid`` is the process the pane was started with (``agent-room start``): a name
        whose session has ended is then taken over by a new placeholder (the old session
        stays in the history, under its id), so the agent just started is not shown as
        the ended one, with its old pid, until its hooks register it."""
        with write_transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT rowid, state, session_id FROM sessions WHERE name = $1 AND left_at IS NULL",
                (name,),
            ).fetchone()
            if row and pid is not None and row["state"] == "ended":
                conn.execute(
                    "UPDATE sessions SET left_at = $1, updated_at = $2 WHERE rowid = $3",
                    (at, at, row[0]),
                )
                event(conn, at, "session.superseded", name, row["session_id"], data={"by": "start"})
                row = None
            if row:
                conn.execute(
                    "UPDATE sessions SET pane = coalesce($1, pane),"
                    " tmux_socket = coalesce($2, tmux_socket), updated_at = $3,"
                    " pid = coalesce($4, pid), pid_start = coalesce($5, pid_start),"
                    " host = coalesce($6, host) WHERE rowid = $7",  # a pane: on this host
                    (pane, tmux_socket, at, pid, pid_start, self.host if pane else None, row[0]),
                )
            else:
                conn.execute(
                    "INSERT INTO sessions (name, agent, state, pane, tmux_socket, pid, pid_start,"
                    " started_at, updated_at, host) VALUES ($1, $2, 'idle', $3, $4, $5, $6, $7,"
                    " $8, $9)",
                    (name, agent, pane, tmux_socket, pid, pid_start, at, at, self.host),
                )
            event(conn, at, "session.joined", name, name, data={"pane": pane, "pid": pid})
        holder = self.holder(name)
        assert holder is not None
        return holder

    def leave(self, name: str, *, at: float) -> None:
        """Give up ``name``: it leaves the room; its history stays."""
        with write_transaction(self.conn) as conn:
            cursor = conn.execute(
                "UPDATE sessions SET left_at = $1, updated_at = $2 WHERE name = $3"
                " AND left_at IS NULL",
                (at, at, name),
            )
            if cursor.rowcount == 0:
                raise NotFound(f"@{name} is not in the room")
            event(conn, at, "session.left", name, name)

    # -- messages ---------------------------------------------------------------------

    def add_message(
        self,
        *,
        kind: str,
        sender: str,
        recipient: str,
        body: str,
        at: float,
        status: str = "queued",
        handover_fields: dict[str, str] | None = None,
        link_id: int | None = None,
    ) -> int:
        """Store one message (and its handover record); return its id."""
        with write_transaction(self.conn) as conn:
            message_id = self._insert_message(
                conn, kind, sender, recipient, body, at, status, handover_fields, link_id
            )
        if status == "queued":
            poke(self.home)
        return message_id

    def _insert_message(
        self,
        conn: Connection,
        kind: str,
        sender: str,
        recipient: str,
        body: str,
        at: float,
        status: str,
        handover_fields: dict[str, str] | None = None,
        link_id: int | None = None,
    ) -> int:
        message_id = conn.execute(
            "INSERT INTO messages (kind, sender, recipient, body, created_at, status, link_id)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7) RETURNING id",
            (kind, sender, recipient, body, at, status, link_id),
        ).fetchone()[0]
        event(
            conn,
            at,
            "message.sent",
            sender,
            recipient,
            message_id,
            {"kind": kind, "to": recipient, "status": status, "size": len(body)},
        )
        if handover_fields is not None:
            import json  # only here: a chat message does not load it (see json_object)

            conn.execute(
                "INSERT INTO handovers (message_id, state, requested_at, fields)"
                " VALUES ($1, 'pending', $2, $3)",
                (message_id, at, json.dumps(handover_fields)),
            )
            event(conn, at, "handover.requested", sender, recipient, message_id)
        return int(message_id)

    def message(self, message_id: int) -> Row | None:
        """One message by id."""
        row = self.conn.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM {_MESSAGE_FROM} WHERE m.id = $1", (message_id,)
        ).fetchone()
        return dict(row) if row else None

    def unread(self, name: str) -> list[Row]:
        """The messages waiting in ``name``'s inbox, oldest first."""
        return _unread(self.conn, name)

    def take_unread(self, name: str, *, at: float) -> list[Row]:
        """The messages waiting in ``name``'s inbox, marked read in the same transaction,
        so two readers of one inbox never both get a message."""
        with write_transaction(self.conn) as conn:
            found = _unread(conn, name)
            self._mark_read(conn, name, [int(row["id"]) for row in found], at)
        return found

    def mark_read(self, name: str, ids: Sequence[int], *, at: float) -> None:
        """Mark messages read by their recipient ``name``."""
        if not ids:
            return
        with write_transaction(self.conn) as conn:
            self._mark_read(conn, name, ids, at)

    @staticmethod
    def _mark_read(conn: Connection, name: str, ids: Sequence[int], at: float) -> None:
        for message_id in ids:
            cursor = conn.execute(
                "UPDATE messages SET status = 'read', read_at = $1 WHERE id = $2"
                " AND recipient = $3 AND read_at IS NULL",
                (at, message_id, name),
            )
            if cursor.rowcount:
                event(conn, at, "message.read", name, name, message_id)

    def mark_delivered(self, name: str, ids: Sequence[int], *, at: float, via: str) -> list[Row]:
        """Receipt messages handed to ``name``'s agent; return those newly delivered.

        Their bodies reach the model with the receipt, so they are read as well: out of
        the inbox and the unread count. Messages already delivered or read are left
        alone, so a repeated receipt (a nudge retyped, a hook retried) delivers nothing
        twice.
        """
        delivered: list[int] = []
        with write_transaction(self.conn) as conn:
            for message_id in ids:
                cursor = conn.execute(
                    "UPDATE messages SET status = 'delivered', delivered_at = $1, read_at = $2,"
                    " failure = NULL, failed_at = NULL, via = $3"
                    " WHERE id = $4 AND recipient = $5 AND status IN ('queued', 'failed')",
                    (at, at, via, message_id, name),
                )
                if cursor.rowcount:
                    delivered.append(message_id)
                    event(conn, at, "message.delivered", name, name, message_id, {"via": via})
                    # the body reached the model: read, and the flow shows it so
                    event(conn, at, "message.read", name, name, message_id)
            if delivered:
                self.close_answered(conn, name)
        return [row for row in (self.message(i) for i in delivered) if row is not None]

    def queued(self, name: str) -> list[Row]:
        """Messages waiting to be delivered to ``name``, oldest first."""
        return rows(
            self.conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM {_MESSAGE_FROM}"
                " WHERE m.recipient = $1 AND m.status = 'queued' ORDER BY m.id",
                (name,),
            )
        )

    def bump_stop_blocks(self, session_id: str, limit: int) -> bool:
        """Count one more consecutive Stop block; False once ``limit`` is reached."""
        with write_transaction(self.conn) as conn:
            cursor = conn.execute(
                "UPDATE sessions SET stop_blocks = stop_blocks + 1"
                " WHERE session_id = $1 AND stop_blocks < $2",
                (session_id, limit),
            )
            return cursor.rowcount == 1

    def history(self, limit: int) -> list[Row]:
        """The last ``limit`` messages of the room, oldest first."""
        found = rows(
            self.conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM {_MESSAGE_FROM} ORDER BY m.id DESC LIMIT $1",
                (limit,),
            )
        )
        found.reverse()
        return found

    # -- handovers --------------------------------------------------------------------

    def handover(self, message_id: int) -> Row | None:
        """The handover record of a message, with the message's sender and recipient."""
        row = self.conn.execute(
            "SELECT h.*, m.sender, m.recipient FROM handovers h"
            " JOIN messages m ON m.id = h.message_id WHERE h.message_id = $1",
            (message_id,),
        ).fetchone()
        return dict(row) if row else None

    def pending_handovers(self) -> list[Row]:
        """Handovers waiting for the operator, oldest first."""
        return rows(
            self.conn.execute(
                "SELECT h.*, m.sender, m.recipient, m.body FROM handovers h"
                " JOIN messages m ON m.id = h.message_id WHERE h.state = 'pending'"
                " ORDER BY h.message_id"
            )
        )

    def decide_handover(
        self,
        message_id: int,
        *,
        state: str,
        expected: str,
        at: float,
        by: str,
        reason: str | None,
        notice: str,
    ) -> int | None:
        """Record a decision and tell the sender; return the notice's id.

        The update only applies while the handover is still ``expected`` (compare and
        set), so two operators deciding at once cannot both win. Returns ``None`` when
        someone else decided first.
        """
        message_status = "queued" if state == "approved" else "cancelled"
        with write_transaction(self.conn) as conn:
            cursor = conn.execute(
                "UPDATE handovers SET state = $1, decided_at = $2, decided_by = $3, reason = $4"
                " WHERE message_id = $5 AND state = $6",
                (state, at, by, reason, message_id, expected),
            )
            if cursor.rowcount == 0:
                return None
            row = conn.execute(
                "SELECT sender, recipient FROM messages WHERE id = $1", (message_id,)
            ).fetchone()
            conn.execute(
                "UPDATE messages SET status = $1 WHERE id = $2 AND status = 'held'",
                (message_status, message_id),
            )
            event(
                conn,
                at,
                f"handover.{state}",
                by,
                row["recipient"],
                message_id,
                {"reason": reason} if reason else None,
            )
            notice_id = self._insert_message(
                conn, "system", "room", row["sender"], notice, at, "queued"
            )
        poke(self.home)
        return notice_id

    # -- audit log --------------------------------------------------------------------

    def events(self, *, after: int = 0, limit: int = 1000) -> list[Row]:
        """Audit events with an id greater than ``after``, oldest first."""
        found = rows(
            self.conn.execute(
                "SELECT * FROM events WHERE id > $1 ORDER BY id LIMIT $2", (after, limit)
            )
        )
        import json

        for row in found:
            row["data"] = json.loads(row["data"])
        return found

    def logevent(
        self,
        kind: str,
        actor: str,
        *,
        at: float,
        subject: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Append one event on its own."""
        with write_transaction(self.conn) as conn:
            event(conn, at, kind, actor, subject, None, data)
