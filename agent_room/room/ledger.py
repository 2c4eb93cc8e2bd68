"""The collaboration ledger's use cases: the history and its statistics."""

from __future__ import annotations

from typing import Any

from agent_room.core.ledger import Collaboration, stats
from agent_room.room.service import Room
from agent_room.store import ledger as store_ledger
from agent_room.turn.core.names import parse_name


class Ledger:
    """Reads the room's handovers as collaborations."""

    def __init__(self, room: Room) -> None:
        self.room = room

    def history(
        self, *, agent: str | None = None, within: float | None = None
    ) -> list[Collaboration]:
        """The collaborations ``agent`` took part in over the last ``within`` seconds."""
        self.room.expire_handovers()
        name = parse_name(agent) if agent is not None else None
        since = self.room.clock() - within if within is not None else None
        found = store_ledger.collaborations(self.room.store, agent=name, since=since)
        return [Collaboration.from_row(row) for row in found]

    def stats(
        self, *, agent: str | None = None, within: float | None = None
    ) -> dict[str, dict[str, dict[str, Any]]]:
        """Per pair and per agent: counts by outcome, approval rate, median times."""
        return stats(self.history(agent=agent, within=within))
