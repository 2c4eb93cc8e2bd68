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
from agent_room.turn.store.params import Params
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
        return _held(_holds(self.conn), name, [] if peer is None else [peer])

    def check(self, name: str, peers: Sequence[str], *, at: float) -> tuple[Hold, int] | None:
        """Before the room prompts ``name`` once more (for messages of ``peers``): the
        hold that forbids it, opened now if this prompt would pass a limit, with the
        turns it counted (0 for a hold opened before); None when the room may prompt.

        Five statements whatever the number of peers (each a round trip on PostgreSQL):
        the settings, the open holds, the releases within the window, and the turns and
        the ``Stop`` hand-overs of every agent concerned; the counts are made here."""
        with write_transaction(self.conn) as conn:
            agent_max, pair_max, window = self.turn_settings(conn)
            others = sorted({p for p in peers if p not in (name, ROOM)})
            hold = _held(_holds(conn), name, others)
            if hold is not None:
                return hold, 0
            if not agent_max and not pair_max:
                return None
            caused = Caused(conn, [name, *others], at - window)
            own = caused.count(name, None)
            pairs = {p: (caused.count(name, p), caused.count(p, name)) for p in others}
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


def _holds(conn: Connection) -> list[Hold]:
    """The unreleased turn holds of the room, in the order they were opened."""
    return [
        (int(hold_id), load_path(path))
        for hold_id, path in conn.execute(
            "SELECT id, path FROM loop_holds WHERE released_at IS NULL AND reason = $1 ORDER BY id",
            (TURNS,),
        ).fetchall()
    ]


def _held(holds: list[Hold], name: str, peers: Sequence[str]) -> Hold | None:
    """The hold of ``holds`` on ``name`` itself, else the first on ``name`` and a peer."""
    for peer in [None, *peers]:
        for hold in holds:
            cycle = hold[1]
            if cycle == (name,) or (peer is not None and {name, peer} == set(cycle)):
                return hold
    return None


class Caused:
    """Turns the room caused the agents concerned within a window, read in three
    statements: each agent counted afresh after a turn hold on it was released (its
    floor); the turns its hook stored with a cause, and each ``Stop`` that handed
    messages over (the turn goes on: one more model turn the room caused)."""

    __slots__ = ("floors", "stops", "turns")

    def __init__(self, conn: Connection, names: Sequence[str], since: float) -> None:
        self.floors = dict.fromkeys(names, since)
        """Per agent: the time after which its turns count."""
        for path, released in conn.execute(
            "SELECT path, released_at FROM loop_holds WHERE reason = $1 AND released_at > $2",
            (TURNS, since),
        ).fetchall():
            for member in self.floors.keys() & set(load_path(path)):
                self.floors[member] = max(self.floors[member], float(released))
        p = Params()
        among = p.each(self.floors)
        self.turns = [
            (str(who), cause, float(started))
            for who, cause, started in conn.execute(
                "SELECT s.name, t.cause, t.started_at FROM sessions s"
                " JOIN turns t ON t.session_id = s.session_id"
                f" WHERE s.name IN ({among}) AND t.started_at > {p(since)}"
                " AND t.cause IS NOT NULL",
                p,
            ).fetchall()
        ]
        """(agent, cause, started) of each turn the room caused within the window."""
        p = Params()
        among = p.each(self.floors)
        self.stops = {
            (str(recipient), str(sender), float(delivered))
            for recipient, sender, delivered in conn.execute(
                "SELECT recipient, sender, delivered_at FROM messages"
                f" WHERE recipient IN ({among}) AND delivered_at > {p(since)} AND via = 'stop'",
                p,
            ).fetchall()
        }
        """(recipient, sender, delivered) of each message a ``Stop`` handed over."""

    def count(self, name: str, cause: str | None) -> int:
        """Turns the room caused ``name`` (``cause`` given: those that peer's messages
        started) since its floor."""
        floor = self.floors[name]
        prompted = sum(
            1
            for who, why, started in self.turns
            if who == name and started > floor and cause in (None, why)
        )
        continued = {
            delivered
            for recipient, sender, delivered in self.stops
            if recipient == name and delivered > floor and cause in (None, sender)
        }
        return prompted + len(continued)
