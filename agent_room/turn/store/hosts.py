"""The machines of a room: when each host's watcher was last seen.

A room on PostgreSQL spans machines. Each host's ``agent-room watch`` marks its host as
seen on every pass (at most every ``BEAT`` seconds); a host not seen for
``SILENT_AFTER`` seconds is silent, and its sessions are unknown rather than ended: no
other host can judge its processes.
"""

from __future__ import annotations

from agent_room.turn.store.db import count_change, write_transaction
from agent_room.turn.store.sqlite_base import event, rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row, StoreBase

BEAT = 5.0
"""How often a watcher marks its host as seen."""
SILENT_AFTER = 30.0
"""A host whose watcher was not seen for this long is silent."""


def on_this_host(store: StoreBase, row: Row) -> bool:
    """Whether a session runs on this process's host: only there are its processes judged
    and its files read (a session from before hosts were kept is local)."""
    return (row.get("host") or store.host) == store.host


def host_seen(store: StoreBase, *, at: float, pid: int) -> None:
    """Mark this process's host as seen now (its watcher is alive); the room's change
    count moves only when the host was new or silent (see ``write_transaction``)."""
    with write_transaction(store.conn, bookkeeping=True) as conn:
        before = conn.execute("SELECT seen_at FROM hosts WHERE host = $1", (store.host,)).fetchone()
        conn.execute(
            "INSERT INTO hosts (host, seen_at, pid) VALUES ($1, $2, $3) ON CONFLICT(host)"
            " DO UPDATE SET seen_at = excluded.seen_at, pid = excluded.pid",
            (store.host, at, pid),
        )
        if before is None or at - float(before[0]) > SILENT_AFTER:
            event(conn, at, "host.seen", "room", store.host, data={"pid": pid})
            count_change(conn)


def hosts(store: StoreBase) -> list[Row]:
    """Every host that has run a watcher, and every host a session names."""
    return rows(
        store.conn.execute(
            "SELECT h.host, h.seen_at, h.pid FROM hosts h UNION"
            " SELECT DISTINCT s.host, CAST(NULL AS REAL), CAST(NULL AS INTEGER) FROM sessions s"
            " WHERE s.left_at IS NULL"
            " AND s.host IS NOT NULL AND s.host NOT IN (SELECT host FROM hosts)"
            " ORDER BY 1"
        )
    )


def silent_hosts(store: StoreBase, now: float) -> set[str]:
    """Hosts other than this one whose watcher has not been seen lately (or ever, while
    their sessions are in the room). Empty in a room on one machine."""
    return {
        str(row["host"])
        for row in hosts(store)
        if row["host"] != store.host
        and (row["seen_at"] is None or now - float(row["seen_at"]) > SILENT_AFTER)
    }
