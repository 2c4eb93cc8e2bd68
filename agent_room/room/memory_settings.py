"""The memory's settings: the token budget of a handover's context, the operator's.

Kept with the room's other settings and read each time a context is built, so a change
reaches every host's running memory worker at its next handover, with no restart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.core.memory import BUDGET_KEY, DEFAULT_BUDGET, check_budget
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.names import OPERATOR

if TYPE_CHECKING:
    from agent_room.room.base import RoomBase


def settings(room: RoomBase) -> dict[str, int]:
    """``budget``: the room's, else the default."""
    stored = SettingsStore(room.store).settings()
    return {"budget": int(stored.get(BUDGET_KEY, DEFAULT_BUDGET))}


def change_settings(room: RoomBase, *, budget: int | None) -> dict[str, int]:
    """Store what is given (refused whole if a value is out of range); the settings now."""
    if budget is not None:
        values = {BUDGET_KEY: check_budget(budget)}
        SettingsStore(room.store).save(values, at=room.clock(), by=OPERATOR)
    return settings(room)
