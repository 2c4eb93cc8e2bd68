"""The process probe used by the command line and the console.

Linux answers from ``/proc`` (the same start ticks the hooks record; psutil would read
``/proc`` there too, and is not loaded: ``who`` starts faster without it); elsewhere
psutil tells whether the PID runs and is not a zombie.
"""

from __future__ import annotations

import sys

from agent_room.turn import procfs

if sys.platform.startswith("linux"):
    _is_alive = procfs.is_alive
else:
    import psutil

    def _is_alive(pid: int, start_ticks: int | None) -> bool:
        del start_ticks  # psutil tells a zombie, not a reused PID
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False


class SystemProbe:
    """``ProcessProbe`` over the running system."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        """True while the process ``pid`` that started at ``start_ticks`` runs."""
        return _is_alive(pid, start_ticks)
