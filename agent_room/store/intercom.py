"""The intercom's sessions and asks in SQLite.

Not mixed into ``SqliteStore``: the hooks import that class on every turn and never need
any of this, so it is a separate class over the same connection. Each public method is
one transaction with its audit events. The rules (resume or new, what cleanup removes,
how cost adds up) come from ``core.intercom`` through the callers; this module keeps the
state consistent: a session is claimed by one ask at a time (a compare and set), and an
ask's message, its answer and the session's new figures are written together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import placeholders
from agent_room.turn.store.port import Connection
from agent_room.turn.store.sqlite_base import event, rows
from agent_room.turn.store.view import StoreView

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from agent_room.turn.store.sqlite import SqliteStore
    from agent_room.turn.store.sqlite_base import Row

ASK = "ask"
ANSWER = "answer"
_COLUMNS = (
    "session_id",
    "repo",
    "label",
    "topic",
    "created_at",
    "last_used_at",
    "parent",
    "asker",
    "message_count",
    "last_message",
    "cost_usd",
    "turns",
    "status",
)


class IntercomStore(StoreView):
    """Intercom state of one room, on the connection of a ``SqliteStore``."""

    # -- reading ----------------------------------------------------------------------

    def sessions(self, repo: str | None = None) -> list[Row]:
        """Sessions (of ``repo``), most recently used first."""
        where, params = ("WHERE repo = $1", (repo,)) if repo is not None else ("", ())
        return rows(
            self.conn.execute(
                f"SELECT * FROM intercom_sessions {where} ORDER BY last_used_at DESC", params
            )
        )

    def session(self, session_id: str) -> Row | None:
        """One session by the client's session id."""
        row = self.conn.execute(
            "SELECT * FROM intercom_sessions WHERE session_id = $1", (session_id,)
        ).fetchone()
        return dict(row) if row else None

    # -- one ask ----------------------------------------------------------------------

    def claim(self, session_id: str, *, at: float, until: float) -> bool:
        """Take ``session_id`` for one ask; False if another ask holds it (or it is gone)."""
        with write_transaction(self.conn) as conn:
            cursor = conn.execute(
                "UPDATE intercom_sessions SET claimed_until = $1 WHERE session_id = $2"
                " AND (claimed_until IS NULL OR claimed_until < $3)",
                (until, session_id, at),
            )
            return cursor.rowcount == 1

    def release(self, session_id: str) -> None:
        """Give a claimed session back."""
        with write_transaction(self.conn) as conn:
            conn.execute(
                "UPDATE intercom_sessions SET claimed_until = NULL WHERE session_id = $1",
                (session_id,),
            )

    def record_ask(
        self, *, asker: str, label: str, question: str, at: float, data: dict[str, Any]
    ) -> int:
        """The question as a message from the asker to the repository; its id.

        Already read: the repository's agent (if one is in the room) is not meant to
        find it in its inbox, nor the deliverer to type it anywhere.
        """
        with write_transaction(self.conn) as conn:
            message_id = _message(conn, self.store, ASK, asker, label, question, at)
            event(conn, at, "intercom.asked", asker, label, message_id, data)
        return message_id

    def record_failure(
        self,
        ask_id: int | None,
        *,
        asker: str,
        label: str,
        reason: str,
        at: float,
        data: dict[str, Any],
    ) -> None:
        """An ask that got no answer, and why (the audit log keeps it)."""
        with write_transaction(self.conn) as conn:
            event(conn, at, "intercom.failed", asker, label, ask_id, {**data, "reason": reason})

    def record_answer(
        self,
        session: dict[str, Any],
        *,
        ask_id: int,
        answer: str,
        at: float,
        data: dict[str, Any],
    ) -> int:
        """The answer as a message back, and the session's new figures; the answer's id."""
        values = {key: session[key] for key in _COLUMNS}
        with write_transaction(self.conn) as conn:
            conn.execute(
                f"INSERT INTO intercom_sessions ({', '.join(_COLUMNS)}, claimed_until)"
                f" VALUES ({placeholders(len(_COLUMNS))}, NULL)"
                " ON CONFLICT(session_id) DO UPDATE SET "
                + ", ".join(f"{k} = excluded.{k}" for k in _COLUMNS[1:])
                + ", claimed_until = NULL",
                tuple(values.values()),
            )
            conn.execute(
                "UPDATE intercom_sessions SET status = CASE WHEN parent = $1 THEN 'active'"
                " ELSE 'inactive' END WHERE repo = $2",
                (session["parent"], session["repo"]),
            )
            answer_id = _message(
                conn, self.store, ANSWER, session["label"], session["asker"], answer, at
            )
            event(conn, at, "intercom.answered", session["label"], session["asker"], ask_id, data)
        return answer_id

    # -- forgetting and importing -----------------------------------------------------

    def forget(self, session_ids: Iterable[str], *, at: float, by: str, why: str) -> list[str]:
        """Remove sessions (never one an ask holds now); the ids removed."""
        gone: list[str] = []
        with write_transaction(self.conn) as conn:
            for session_id in session_ids:
                cursor = conn.execute(
                    "DELETE FROM intercom_sessions WHERE session_id = $1"
                    " AND (claimed_until IS NULL OR claimed_until < $2)",
                    (session_id, at),
                )
                if cursor.rowcount:
                    gone.append(session_id)
                    event(conn, at, "intercom.forgotten", by, session_id, data={"why": why})
        return gone

    def import_sessions(self, sessions: Iterable[dict[str, Any]], *, at: float, by: str) -> int:
        """Add sessions read from elsewhere, keeping any the room already has; how many."""
        added = 0
        with write_transaction(self.conn) as conn:
            for session in sessions:
                values = tuple(session[key] for key in _COLUMNS)
                cursor = conn.execute(
                    f"INSERT INTO intercom_sessions ({', '.join(_COLUMNS)})"
                    f" VALUES ({placeholders(len(_COLUMNS))}) ON CONFLICT DO NOTHING",
                    values,
                )
                added += cursor.rowcount
            event(conn, at, "intercom.imported", by, None, data={"sessions": added})
        return added


def _message(
    conn: Connection,
    store: SqliteStore,
    kind: str,
    sender: str,
    recipient: str,
    body: str,
    at: float,
) -> int:
    message_id = store._insert_message(conn, kind, sender, recipient, body, at, "read")
    conn.execute("UPDATE messages SET read_at = $1 WHERE id = $2", (at, message_id))
    return message_id
