"""The one gate of every prompt of the room's own making: a nudge through the pane or the
socket, a Stop that hands messages over, a crossing of a link."""

from __future__ import annotations

from agent_room.turn.core.budgets import over_text
from agent_room.turn.core.loops import is_turn_path, turns_reason
from agent_room.turn.store.turn_breaker import TurnBreaker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.room.service import RoomCore


def prompt_refusal(room: RoomCore, name: str, senders: list[str], now: float) -> str | None:
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
