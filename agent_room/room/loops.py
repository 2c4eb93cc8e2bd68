"""The fleet-wide loop breaker as the operator meets it: holds, release, settings.

The check itself runs inside every ``send`` (``store.loops.LoopStore.send``); this is the
operator's side: what is held and why, letting it through or dropping it, and the
threshold (``core.loops``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.room.service import Room
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.errors import BadInput, NotFound, Refused
from agent_room.turn.core.loops import (
    PER_EDGE_KEY,
    TURN_WINDOW_KEY,
    TURNS_AGENT_KEY,
    TURNS_PAIR_KEY,
    WINDOW_KEY,
    load_path,
)
from agent_room.turn.core.names import OPERATOR
from agent_room.turn.store.loops import LoopStore
from agent_room.turn.store.turn_breaker import TurnBreaker

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row


class Loops:
    """The loop holds of one room."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.store = LoopStore(room.store)

    def settings(self) -> tuple[int, float]:
        """(messages along every step of a cycle, window in seconds); 0 is off."""
        return self.store.settings()

    def configure(self, per_edge: int, window: float) -> tuple[int, float]:
        """Change the threshold (``per_edge`` 0 switches the loop breaker off)."""
        if not 0 <= per_edge <= 10_000 or not 0 < window <= 86400:
            raise BadInput("the loop breaker is N/SECONDS with N up to 10000, or off")
        SettingsStore(self.room.store).save(
            {PER_EDGE_KEY: per_edge, WINDOW_KEY: window}, at=self.room.clock(), by=OPERATOR
        )
        return self.settings()

    def turn_settings(self) -> tuple[int, int, float]:
        """(turns per agent, turns per pair, window in seconds) of the turn breaker."""
        return TurnBreaker(self.room.store).turn_settings()

    def configure_turns(self, agent: int, pair: int, window: float) -> tuple[int, int, float]:
        """Change the turn breaker's limits (0 switches a count off)."""
        if not (0 <= agent <= 10_000 and 0 <= pair <= 10_000 and 0 < window <= 86400):
            raise BadInput("the turn breaker is AGENT/PAIR/SECONDS with counts up to 10000, or off")
        SettingsStore(self.room.store).save(
            {TURNS_AGENT_KEY: agent, TURNS_PAIR_KEY: pair, TURN_WINDOW_KEY: window},
            at=self.room.clock(),
            by=OPERATOR,
        )
        return self.turn_settings()

    def holds(self, *, active_only: bool = False) -> list[Row]:
        """Holds, newest first, each with ``cycle`` (names), ``held`` (waiting now) and
        ``reason`` (``turns`` for the turn breaker's, else None)."""
        found = self.store.holds(active_only=active_only)
        for row in found:
            row["cycle"] = list(load_path(row.pop("path")))
            row["dropped"] = bool(row["dropped"])
        return found

    def release(self, hold_id: int, *, drop: bool = False, caller: str | None = None) -> int:
        """Deliver (or drop) what a hold keeps, and end it: the operator only. Returns how
        many messages moved."""
        if caller is not None:
            raise Refused(f"only the operator can release loop #{hold_id}")
        hold = self.store.hold(hold_id)
        if hold is None:
            raise NotFound(f"no loop #{hold_id}")
        if hold["released_at"] is not None:
            raise Refused(f"loop #{hold_id} was released already")
        moved = self.store.release(hold_id, drop=drop, at=self.room.clock(), by=OPERATOR)
        if moved is None:
            raise Refused(f"loop #{hold_id} was released meanwhile")
        return moved
