"""The loop breaker's state in SQLite: holds, what each holds, and the checked send.

Not mixed into ``SqliteStore`` (the hooks import that class on every turn and never need
this). ``send`` is ``agent-room send``'s whole write: the check and the message are one
transaction, so two senders racing cannot both slip past a hold. Its common case costs
two indexed reads (the room's active holds, and the sender's messages to the recipient
within the window); the cycle search runs only when that step is busy. The rules come
from ``core.loops`` and ``core.cycles``.
"""

from __future__ import annotations

from agent_room.turn.core.cycles import cycle_edges
from agent_room.turn.core.loops import (
    PER_EDGE_KEY,
    WINDOW_KEY,
    held_reason,
    load_path,
    settings_from,
    store_path,
)
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import Params
from agent_room.turn.store.sqlite_base import event, rows
from agent_room.turn.store.view import StoreView
from agent_room.turn.store.wake import poke

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.store.port import Connection
    from agent_room.turn.store.sqlite_base import Row

    Hold = tuple[int, tuple[str, ...]]
    """A loop hold: its id and its cycle (first name = last)."""

ROOM = "room"
RECENT = 200
"""Messages of one agent the cycle search reads (its newest within the window): a loop's
steps are dense in them, and a busy pipeline's send stays cheap."""


def setting_number(text: str) -> int | float | None:
    """A stored setting (JSON text of a number) without loading json on the send path."""
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return None


def _at_least(conn: Connection, count: int, where: str, args: tuple[object, ...]) -> bool:
    """Whether ``count`` agents' messages match ``where``: it reads no more than that many,
    so a flood one way costs what a quiet room does."""
    found = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM messages WHERE {where} AND kind != 'system'"
        f" LIMIT ${len(args) + 1}) AS found",
        (*args, count),
    ).fetchone()[0]
    return bool(found >= count)


def cost_hold(conn: Connection, sender: str, recipient: str, at: float) -> Hold | None:
    """Open a hold when a pair messaging each other spends too fast (``core.cost_rate``);
    None when it does not. Its common case is one indexed read: whether ``recipient``
    wrote to ``sender`` within the window."""
    from agent_room.turn.core.cost_rate import LIMIT_KEY, WINDOW_KEY, settings_from

    found = conn.execute(
        "SELECT key, value FROM settings WHERE key IN ($1, $2)", (LIMIT_KEY, WINDOW_KEY)
    ).fetchall()
    limit, window = settings_from({key: setting_number(value) for key, value in found})
    if not limit:
        return None
    since = at - window
    if not _at_least(conn, 1, "sender = $1 AND recipient = $2 AND created_at > $3",
                     (recipient, sender, since)):  # fmt: skip
        return None  # not an exchange: one way only
    cycle = (sender, recipient, sender)
    released = conn.execute(
        "SELECT max(released_at) FROM loop_holds WHERE released_at > $1 AND path IN ($2, $3)",
        (since, store_path(cycle), store_path((recipient, sender, recipient))),
    ).fetchone()[0]
    spent = conn.execute(
        "SELECT coalesce(sum(cost_usd), 0) FROM usage WHERE name IN ($1, $2) AND at > $3",
        (sender, recipient, max(since, float(released or since))),
    ).fetchone()[0]
    if float(spent) < limit:
        return None
    hold_id = conn.execute(
        "INSERT INTO loop_holds (path, detected_at) VALUES ($1, $2) RETURNING id",
        (store_path(cycle), at),
    ).fetchone()[0]
    return int(hold_id), cycle


class LoopStore(StoreView):
    """Loop holds of one room, on the connection of a ``SqliteStore``."""

    def settings(self, conn: Connection | None = None) -> tuple[int, float]:
        """(messages per step, window in seconds) of the loop breaker."""
        found = (conn or self.conn).execute(
            "SELECT key, value FROM settings WHERE key IN ($1, $2)", (PER_EDGE_KEY, WINDOW_KEY)
        )
        return settings_from({key: setting_number(value) for key, value in found.fetchall()})

    def send(
        self, kind: str, sender: str, recipient: str, body: str, *, at: float
    ) -> tuple[int, Hold | None]:
        """Store a message, held when it runs in a loop; return its id and the hold."""
        with write_transaction(self.conn) as conn:
            per_edge, window = self.settings(conn)
            hold = fresh = None
            if per_edge:
                hold = self._active(conn, sender, recipient)
                if hold is None:
                    hold = fresh = self._detect(conn, sender, recipient, at, per_edge, window)
            if hold is None:
                hold = fresh = cost_hold(conn, sender, recipient, at)
            status = "queued" if hold is None else "held"
            message_id = self.store._insert_message(conn, kind, sender, recipient, body, at, status)
            if hold is not None:
                hold_id, cycle = hold
                conn.execute(
                    "UPDATE messages SET failure = $1 WHERE id = $2",
                    (held_reason(hold_id, cycle), message_id),
                )
                conn.execute(
                    "INSERT INTO loop_held (message_id, hold_id) VALUES ($1, $2)",
                    (message_id, hold_id),
                )
            if fresh is not None:
                event(
                    conn,
                    at,
                    "loop.held",
                    ROOM,
                    sender,
                    message_id,
                    {"loop": hold_id, "path": list(cycle), "per_edge": per_edge, "window": window},
                )
        if hold is None:
            poke(self.store.home)
        return message_id, hold

    def active(self, sender: str, recipient: str) -> Hold | None:
        """The unreleased hold on the step ``sender -> recipient``, if any."""
        return self._active(self.conn, sender, recipient)

    def _active(self, conn: Connection, sender: str, recipient: str) -> Hold | None:
        """The unreleased hold whose cycle has the step ``sender -> recipient``."""
        for hold_id, path in conn.execute(
            "SELECT id, path FROM loop_holds WHERE released_at IS NULL"
        ).fetchall():
            cycle = load_path(path)
            if (sender, recipient) in cycle_edges(cycle):
                return int(hold_id), cycle
        return None

    def _detect(
        self,
        conn: Connection,
        sender: str,
        recipient: str,
        at: float,
        per_edge: int,
        window: float,
    ) -> Hold | None:
        """Open a hold when this message closes a loop; None when it does not."""
        since = at - window
        if not _at_least(conn, per_edge, "sender = $1 AND created_at > $2", (recipient, since)):
            return None  # the common case: no busy way back from the recipient
        from agent_room.turn.core.cycles import search

        floors: dict[tuple[str, str], float] = {}
        for path, released in conn.execute(
            "SELECT path, released_at FROM loop_holds WHERE released_at > $1", (since,)
        ).fetchall():
            cycle = load_path(path)
            for step in cycle_edges(cycle):
                floors[step] = max(floors.get(step, since), float(released))
        known: dict[str, dict[str, int]] = {}

        def counts(node: str) -> dict[str, int]:
            """Messages from ``node`` per recipient among its last ``RECENT`` in the window."""
            if node not in known:
                found = known[node] = {}
                for target, created in conn.execute(
                    "SELECT recipient, created_at FROM messages WHERE sender = $1"
                    " AND created_at > $2 AND kind != 'system' ORDER BY created_at DESC LIMIT $3",
                    (node, since, RECENT),
                ).fetchall():
                    if created > floors.get((node, target), since):
                        found[target] = found.get(target, 0) + 1
            return known[node]

        if counts(sender).get(recipient, 0) + 1 < per_edge:
            return None  # this step is not busy (or only before the operator's release)

        def neighbours(node: str) -> list[str]:
            return [t for t, n in counts(node).items() if n >= per_edge]

        back = search(neighbours, recipient, sender)
        if back is None:
            return None
        cycle = (sender, *back)
        hold_id = conn.execute(
            "INSERT INTO loop_holds (path, detected_at) VALUES ($1, $2) RETURNING id",
            (store_path(cycle), at),
        ).fetchone()[0]
        return hold_id, cycle

    # -- the operator's side ----------------------------------------------------------

    def holds(self, *, active_only: bool = False, limit: int = 200) -> list[Row]:
        """Loop holds, newest first, with how many messages each holds now and in all."""
        where = "WHERE h.released_at IS NULL" if active_only else ""
        return rows(
            self.conn.execute(
                "SELECT h.*, (SELECT count(*) FROM loop_held x JOIN messages m"
                " ON m.id = x.message_id WHERE x.hold_id = h.id AND m.status = 'held') AS held,"
                " (SELECT count(*) FROM loop_held x WHERE x.hold_id = h.id) AS caught"
                f" FROM loop_holds h {where} ORDER BY h.id DESC LIMIT $1",
                (limit,),
            )
        )

    def hold(self, hold_id: int) -> Row | None:
        """One hold by id."""
        row = self.conn.execute("SELECT * FROM loop_holds WHERE id = $1", (hold_id,)).fetchone()
        return dict(row) if row else None

    def held_by_recipient(self) -> dict[str, int]:
        """Messages each agent has waiting behind a loop hold (for ``who`` and the console):
        from the few the loop breaker ever caught, never a scan of the history."""
        return {
            str(name): int(count)
            for name, count in self.conn.execute(
                "SELECT m.recipient, count(*) FROM messages m WHERE m.id IN"
                " (SELECT x.message_id FROM loop_held x) AND m.status = 'held'"
                " GROUP BY m.recipient"
            ).fetchall()
        }

    def release(self, hold_id: int, *, drop: bool, at: float, by: str) -> int | None:
        """End a hold: what it holds is delivered (or, with ``drop``, cancelled). Returns
        how many messages moved; None when the hold was released meanwhile."""
        with write_transaction(self.conn) as conn:
            cursor = conn.execute(
                "UPDATE loop_holds SET released_at = $1, released_by = $2, dropped = $3"
                " WHERE id = $4 AND released_at IS NULL",
                (at, by, int(drop), hold_id),
            )
            if cursor.rowcount == 0:
                return None
            ids = [
                int(r[0])
                for r in conn.execute(
                    "SELECT m.id FROM loop_held x JOIN messages m ON m.id = x.message_id"
                    " WHERE x.hold_id = $1 AND m.status = 'held' ORDER BY m.id",
                    (hold_id,),
                ).fetchall()
            ]
            p = Params()
            if drop and ids:
                failure = p(f"dropped by the operator (loop #{hold_id})")
                conn.execute(
                    f"UPDATE messages SET status = 'cancelled', failure = {failure}"
                    f" WHERE id IN ({p.each(ids)})",
                    p,
                )
            elif ids:
                conn.execute(
                    "UPDATE messages SET status = 'queued', failure = NULL"
                    f" WHERE id IN ({p.each(ids)})",
                    p,
                )
            event(
                conn,
                at,
                "loop.released",
                by,
                None,
                data={"loop": hold_id, "ids": ids, "dropped": drop},
            )
        if ids and not drop:
            poke(self.store.home)
        return len(ids)
