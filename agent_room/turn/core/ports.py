"""The one port the turn path needs typed: a process probe (``agent_room.core.ports``
holds the others, and names this one too)."""

from __future__ import annotations

from typing import Protocol


class ProcessProbe(Protocol):
    """Tells whether a recorded process is still the same running process."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        """True while ``pid`` runs and started at ``start_ticks`` (not a zombie)."""
        ...
