"""Read-only queries of the console, of ``who`` and of enter / exit, over the room's store.

Functions over a ``StoreBase`` rather than methods of ``SqliteStore``: they are only
read by the console's reader thread, ``who`` and the enter commands, and each keeps to an
index so that a room with a long history opens fast.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import Params
from agent_room.turn.store.sqlite import INBOX_STATUSES
from agent_room.turn.store.sqlite_base import event, rows

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agent_room.turn.store.sqlite_base import Row, StoreBase

FLOW_KINDS = (
    "message.sent",
    "message.delivered",
    "message.read",
    "message.failed",
    "message.retried",
    "handover.requested",
    "handover.approved",
    "handover.rejected",
    "handover.expired",
    "link.opened",
    "link.frozen",
    "link.thawed",
    "link.closed",
    "loop.held",
    "loop.released",
)
"""Audit events that make up the message flow."""

ROSTER_COLUMNS = (
    "name",
    "session_id",
    "agent",
    "state",
    "host",
    "pane",
    "pid",
    "cwd",
    "parent",
    "depth",
    "started_at",
    "transcript_path",
)
"""The columns of ``roster``'s rows, in order."""

ENTERED = "session.entered"
"""The audit event of one enter: subject is the session entered, data says from where."""


def flow_events(store: StoreBase, limit: int) -> list[Row]:
    """The last ``limit`` flow events with their message, oldest first."""
    p = Params()
    found = rows(
        store.conn.execute(
            "SELECT e.id, e.at, e.kind, e.actor, e.subject, e.message_id, e.data,"
            " m.kind AS message_kind, m.sender, m.recipient, m.status,"
            " substr(m.body, 1, 200) AS body"
            f" FROM events e LEFT JOIN messages m ON m.id = e.message_id"
            f" WHERE e.kind IN ({p.each(FLOW_KINDS)}) ORDER BY e.id DESC LIMIT {p(limit)}",
            p,
        )
    )
    found.reverse()
    return found


def roster(store: StoreBase) -> Sequence[Sequence[Any]]:
    """Every session holding a name, oldest first, as rows of ``ROSTER_COLUMNS``.

    Rows by position, not dicts: ``who`` reads thousands of them at every start, and
    lays them out column by column (``room.roster``).
    """
    found: list[Sequence[Any]] = store.conn.execute(
        f"SELECT {', '.join(ROSTER_COLUMNS)} FROM sessions WHERE left_at IS NULL"
        " ORDER BY started_at, rowid"
    ).fetchall()
    return found


def unread_counts(store: StoreBase) -> dict[str, tuple[int, int]]:
    """Each recipient's unread messages and how many of them failed, in one pass over
    the unread index (recipients with none are left out)."""
    p = Params()
    return {
        str(recipient): (int(unread), int(failed))
        for recipient, unread, failed in store.conn.execute(
            "SELECT recipient, count(*), sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END)"
            f" FROM messages WHERE read_at IS NULL AND status IN ({p.each(INBOX_STATUSES)})"
            " GROUP BY recipient",
            p,
        ).fetchall()
    }


def last_message_id(store: StoreBase) -> int:
    """The newest message's id (0 in an empty room)."""
    return int(store.conn.execute("SELECT coalesce(max(id), 0) FROM messages").fetchone()[0])


def last_event_id(store: StoreBase) -> int:
    """The newest event's id in the room's log (0 in an empty room). The log takes one
    event for each change the operator sees (a message sent, nudged, delivered, read; a
    turn begun or ended; a session joined), on either engine."""
    return int(store.conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])


def traffic(store: StoreBase, last: int, window: int) -> list[Row]:
    """Message counts per (sender, recipient) over the ``window`` messages up to ``last``.

    A range of the primary key, so it costs the same on any history. The room's own
    notices are left out: they are not agents talking.
    """
    return rows(
        store.conn.execute(
            "SELECT sender, recipient, count(*) AS count FROM messages"
            " WHERE id > $1 AND id <= $2 AND kind != 'system' GROUP BY sender, recipient",
            (last - window, last),
        )
    )


def recent_handovers(store: StoreBase, since: float) -> list[Row]:
    """Handovers requested since ``since`` (any state), for cycle detection."""
    return rows(
        store.conn.execute(
            "SELECT h.message_id, h.state, m.sender, m.recipient FROM handovers h"
            " JOIN messages m ON m.id = h.message_id WHERE h.requested_at >= $1"
            " AND h.state IN ('pending', 'approved') ORDER BY h.message_id",
            (since,),
        )
    )


def record_entry(
    store: StoreBase,
    *,
    actor: str,
    to_session: str,
    from_session: str | None,
    from_pane: str | None,
    from_socket: str | None,
    at: float,
    from_tty: str | None = None,
) -> None:
    """Remember one jump in the audit log, so that exit-agent can undo it."""
    data = {"from_session": from_session, "from_pane": from_pane, "from_socket": from_socket}
    if from_tty:
        data["from_tty"] = from_tty
    with write_transaction(store.conn) as conn:
        event(conn, at, ENTERED, actor, to_session, None, data)


def entries(store: StoreBase, limit: int = 200) -> list[Row]:
    """The recorded jumps, newest first."""
    found = rows(
        store.conn.execute(
            "SELECT id, at, actor, subject, data FROM events WHERE kind = $1"
            " ORDER BY id DESC LIMIT $2",
            (ENTERED, limit),
        )
    )
    for row in found:
        row["data"] = json.loads(row["data"])
    return found


def live_worktrees(store: StoreBase) -> int:
    """How many agents work in a worktree the room made (``store.worktrees``): ``who``
    and ``tree`` load git's part only in a room that has one."""
    found = store.conn.execute("SELECT count(*) FROM worktrees WHERE removed_at IS NULL")
    return int(found.fetchone()[0])
