"""The fleet-wide loop breaker as the operator meets it: holds, release, settings.

The check itself runs inside every ``send`` (``store.loops.LoopStore.send``); this is the
operator's side: what is held and why, letting it through or dropping it, and the
threshold (``core.loops``).
"""

from __future__ import annotations

from agent_room.core.errors import BadInput, NotFound, Refused
from agent_room.core.loops import (
    PER_EDGE_KEY,
    TURN_WINDOW_KEY,
    TURNS_AGENT_KEY,
    TURNS_PAIR_KEY,
    WINDOW_KEY,
    is_turn_path,
    load_path,
    turns_reason,
)
from agent_room.core.names import OPERATOR
from agent_room.core.usage import over_text
from agent_room.room.service import Room
from agent_room.store.loops import LoopStore
from agent_room.store.settings import SettingsStore
from agent_room.store.turn_breaker import TurnBreaker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.store.sqlite_base import Row


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


def prompt_refusal(room: Room, name: str, senders: list[str], now: float) -> str | None:
    """Why the room must not prompt ``name`` now for messages of ``senders``, or None: the
    one gate of every prompt of the room's own making (a nudge through the pane or the
    socket, a Stop that hands messages over). Its budget is spent (its own or the
    room's: until the operator raises it), or the turn breaker holds it (too many turns
    caused it, or it and a sender, within the window: a trip opens the hold, which the
    operator hears of once). The messages stay queued either way."""
    held_by = room.store.over_budget(name, now)
    if held_by is not None:
        return over_text(name, held_by)
    breaker = TurnBreaker(room.store)
    found = breaker.check(name, senders, at=now)
    return None if found is None else held_turns(breaker, found[0])


def held_turns(breaker: TurnBreaker, hold: tuple[int, tuple[str, ...]]) -> str:
    """The words for a turn hold (the same on every pass: a note is written on change)."""
    agent, pair, window = breaker.turn_settings()
    hold_id, path = hold
    return turns_reason(hold_id, path, agent if is_turn_path(path) else pair, window)
