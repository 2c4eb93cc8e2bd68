"""The process probe used by the command line and the console.

Linux answers from ``/proc`` (the same start ticks the hooks record); elsewhere psutil
tells whether the PID runs and is not a zombie.
"""

from __future__ import annotations

from pathlib import Path

import psutil

from agent_room.turn import procfs


class SystemProbe:
    """``ProcessProbe`` over the running system."""

    _procfs: bool | None = None
    """Whether ``/proc`` answers here (looked at once: ``who`` asks about every session)."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        """True while the process ``pid`` that started at ``start_ticks`` runs."""
        if self._procfs is None:
            self._procfs = Path(procfs.PROC).is_dir()
        if self._procfs:
            return procfs.is_alive(pid, start_ticks)
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False
