"""``ProcessExits``: the kernel says when a watched process ends, so nothing polls for it.

The injector must notice an agent killed without its SessionEnd hook (its links are
severed). Reading every agent's ``/proc/<pid>/stat`` every couple of seconds was most
of what a room of fifty idle agents cost at rest. A pidfd (Linux 5.3) names one
process for good, whatever happens to its pid later, and becomes readable when that
process ends: the worker waits on them with its other wake-ups and looks at the
processes only when one has ended.

A pidfd is opened for a pid, then the process is checked to be the one registered (its
start time): opened the other way round, a pid reused in between would be watched in
place of the agent. A process that cannot be watched (it ended already, its pid was
reused, or this system has no pidfds) makes ``watch`` say so, and the caller checks
the processes itself, as before.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable, Iterable

Process = tuple[int, int | None]
"""A pid and the start time it was registered with (None: not known)."""


def available() -> bool:
    """Whether this system has pidfds."""
    return hasattr(os, "pidfd_open")


class ProcessExits:
    """The pidfds of a set of processes, waited for alongside other file descriptors."""

    def __init__(self, is_alive: Callable[[int, int | None], bool]) -> None:
        self.is_alive = is_alive
        """Whether the process started at the given time still runs (the room's check)."""
        self._fds: dict[Process, int] = {}
        self._poll = select.poll()
        """Every pidfd watched, and the caller's wake-up once it waited here: kept, not
        built again for each look (fifty agents: fifty registrations a pass)."""
        self._woken: int | None = None

    def watch(self, processes: Iterable[Process]) -> bool:
        """Watch exactly ``processes`` from now on; whether every one of them is watched
        (False: one ended already, or cannot be watched here)."""
        wanted = set(processes)
        for gone in set(self._fds) - wanted:
            closing = self._fds.pop(gone)
            self._poll.unregister(closing)
            os.close(closing)
        every = True
        for process in wanted - set(self._fds):
            fd = self._open(process)
            if fd is None:
                every = False
            else:
                self._fds[process] = fd
                self._poll.register(fd, select.POLLIN)
        return every

    def fds(self) -> list[int]:
        """The file descriptors that become readable when a watched process ends."""
        return list(self._fds.values())

    def ended(self) -> bool:
        """Whether a watched process has ended (without waiting)."""
        return bool(self._fds) and self._ready(0.0)[1]

    def wait(self, woken: int, timeout: float) -> tuple[bool, bool]:
        """Sleep until ``woken`` (the caller's wake-up) is readable, a watched process
        ends, or ``timeout`` seconds pass: (whether ``woken`` is readable, whether a
        process ended)."""
        if woken != self._woken:
            if self._woken is not None:
                self._poll.unregister(self._woken)
            self._poll.register(woken, select.POLLIN)
            self._woken = woken
        return self._ready(timeout)

    def _ready(self, timeout: float) -> tuple[bool, bool]:
        ready = [fd for fd, _ in self._poll.poll(max(0.0, timeout) * 1000)]
        woken = self._woken in ready
        return woken, len(ready) > woken

    def close(self) -> None:
        """Stop watching every process (and forget the caller's wake-up)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._poll = select.poll()
        self._woken = None

    def _open(self, process: Process) -> int | None:
        pid, started = process
        if not available():
            return None
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return None  # gone already (or not allowed): the caller looks itself
        if not self.is_alive(pid, started):  # the pid now names another process
            os.close(fd)
            return None
        return fd
