"""The ports: what the room and the workers need from the outside world.

Real adapters live in ``agent_room.adapters`` and are built by the entry points; tests
pass fakes. Standard library only.
"""

from __future__ import annotations

from typing import Protocol


class ProcessProbe(Protocol):
    """Tells whether a recorded process is still the same running process."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        """True while ``pid`` runs and started at ``start_ticks`` (not a zombie)."""
        ...


class Clock(Protocol):
    """Wall-clock time in seconds since the epoch."""

    def __call__(self) -> float:
        """Now."""
        ...
