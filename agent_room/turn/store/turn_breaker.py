"""The turn breaker's state: turns the room caused, counted per agent and per pair.

Beside the loop breaker (``store.loops``), whose holds it shares: a turn hold is a row of
``loop_holds`` with the reason ``turns`` and a path of one agent, or of a pair as a
cycle (``b a b``), so ``agent-room loops``, its release and the console treat both the
same way. The count reads the turns table: every turn the hook stored with a cause (a
peer's message the room handed over, or the room's own prompt, ``core.origins``). The
rules come from ``core.loops``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_room.turn.core.loops import (
    TURN_WINDOW_KEY,
    TURNS,
    TURNS_AGENT_KEY,
    TURNS_PAIR_KEY,
    exchanged,
    is_turn_path,
    load_path,
    store_path,
    turn_settings_from,
    turn_trip,
)
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.loops import ROOM, LoopStore, setting_number
from agent_room.turn.store.sqlite_base import event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.store.port import Connection

Hold = tuple[int, tuple[str, ...]]


class TurnBreaker(LoopStore):
    """Turn holds of one room, on the connection of a ``SqliteStore``."""

    def turn_settings(self, conn: Connection | None = None) -> tuple[int, int, float]:
        """(turns per agent, turns per pair, window in seconds); a limit 0 is off."""
        found = (conn or self.conn).execute(
            "SELECT key, value FROM settings WHERE key IN ($1, $2, $3)",
            (TURNS_AGENT_KEY, TURNS_PAIR_KEY, TURN_WINDOW_KEY),
        )
        return turn_settings_from({key: setting_number(value) for key, value in found.fetchall()})

    def holding(self, name: str, peer: str | None = None) -> Hold | None:
        """The unreleased turn hold on ``name`` itself, or on ``name`` and ``peer``."""
        return self._holding(self.conn, name, peer)

    @staticmethod
    def _holding(conn: Connection, name: str, peer: str | None) -> Hold | None:
        for hold_id, path in conn.execute(
            "SELECT id, path FROM loop_holds WHERE released_at IS NULL AND reason = $1",
            (TURNS,),
        ).fetchall():
            cycle = load_path(path)
            if cycle == (name,) or (peer is not None and {name, peer} == set(cycle)):
                return int(hold_id), cycle
        return None

    def check(self, name: str, peers: Sequence[str], *, at: float) -> tuple[Hold, int] | None:
        """Before the room prompts ``name`` once more (for messages of ``peers``): the
        hold that forbids it, opened now if this prompt would pass a limit, with the
        turns it counted (0 for a hold opened before); None when the room may prompt."""
        with write_transaction(self.conn) as conn:
            agent_max, pair_max, window = self.turn_settings(conn)
            others = sorted({p for p in peers if p not in (name, ROOM)})
            for peer in [None, *others]:
                hold = self._holding(conn, name, peer)
                if hold is not None:
                    return hold, 0
            if not agent_max and not pair_max:
                return None
            since = at - window
            own = self._caused(conn, name, None, since)
            pairs = {
                p: (self._caused(conn, name, p, since), self._caused(conn, p, name, since))
                for p in others
            }
            path = turn_trip(name, own, pairs, agent_max=agent_max, pair_max=pair_max)
            if path is None:
                return None
            turns = own if is_turn_path(path) else exchanged(*pairs[path[0]])  # caused so far
            hold_id = conn.execute(
                "INSERT INTO loop_holds (path, detected_at, reason) VALUES ($1, $2, $3)"
                " RETURNING id",
                (store_path(path), at, TURNS),
            ).fetchone()[0]
            event(
                conn,
                at,
                "loop.held",
                ROOM,
                name,
                data={
                    "loop": hold_id,
                    "path": list(path),
                    "reason": TURNS,
                    "turns": turns,
                    "window": window,
                },
            )
            return (hold_id, path), turns

    @staticmethod
    def _caused(conn: Connection, name: str, cause: str | None, since: float) -> int:
        """Turns the room caused ``name`` since ``since`` (``cause`` given: those that
        peer's messages started), counted afresh after a turn hold on them was released:
        the turns its hook stored with a cause, and each Stop that handed messages over
        (the turn goes on: one more model turn the room caused)."""
        released = conn.execute(
            "SELECT max(released_at) FROM loop_holds WHERE reason = $1 AND released_at > $2"
            " AND (path = $3 OR path LIKE $4 OR path LIKE $5)",
            (TURNS, since, name, f"{name} %", f"% {name} %"),
        ).fetchone()[0]
        floor = max(since, float(released)) if released is not None else since
        where, args = "t.cause IS NOT NULL", list[str]()
        sent, sender = "", list[str]()
        if cause is not None:
            where, args = "t.cause = $3", [cause]
            sent, sender = " AND sender = $3", [cause]
        prompted = conn.execute(
            "SELECT count(*) FROM turns t WHERE t.session_id IN"
            " (SELECT session_id FROM sessions WHERE name = $1)"
            f" AND t.started_at > $2 AND {where}",
            (name, floor, *args),
        ).fetchone()[0]
        continued = conn.execute(
            "SELECT count(DISTINCT delivered_at) FROM messages WHERE recipient = $1"
            f" AND delivered_at > $2 AND via = 'stop'{sent}",
            (name, floor, *sender),
        ).fetchone()[0]
        return int(prompted) + int(continued)
