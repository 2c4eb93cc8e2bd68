"""``Reading``: whether a pass of the console's reader reads the room, or need not.

Every write to the room wakes the file watch, and most writes at rest are the workers'
renewals of their leases, which change nothing shown; the reader also passes every
``safety_interval``. The room's change count (``store.db.write_transaction``) tells the
writes apart: a pass that finds it where the last read left it reads nothing, unless
something that changes without a write to the room may have changed. Those are: Claude
Code's own registry of sessions (the sessions outside the room, a directory listing read
at most every ``OUTSIDE_INTERVAL``); and the passing time (ages, time windows), for which
the room is read at least every ``FULL_READ`` seconds. The agents' processes are checked
at a safety pass (unless the room's injector checks them: the console's own, or on one
machine the one it stands by for): a process found ended is written to the room, which
moves the count, so the room is read only then.
A pass the operator asked for always reads.
"""

from __future__ import annotations

import time

from agent_room.core.snapshot import RoomSnapshot
from agent_room.room.snapshot import OUTSIDE_INTERVAL, SnapshotReader

FULL_READ = 10.0
"""Seconds between two reads of a room that nothing was written to."""


class Reading:
    """The reader thread's own: which passes read the room."""

    def __init__(self, reader: SnapshotReader) -> None:
        self.reader = reader
        self._count: int | None = None
        """The room's change count at the last read (None: read at the next pass)."""
        self._outside: object = None
        """Claude Code's registry as the last read saw it."""
        self._listed: object = None
        self._listed_at = float("-inf")
        self._read_at = float("-inf")

    def read(self, *, timed: bool = False, asked: bool = False) -> RoomSnapshot | None:
        """The room now, or None when nothing shown can have changed since the last read.

        ``timed``: a safety pass (the processes' liveness check may be due); ``asked``:
        the operator asked for it."""
        if timed:  # a process found ended is written: the count below moves
            self.reader.check_liveness()
        count = self.reader.room.store.changes()
        now = time.monotonic()
        native = self.reader.native
        if native is not None and now - self._listed_at >= OUTSIDE_INTERVAL:
            self._listed, self._listed_at = native.sessions(), now
        outside = self._listed
        if not (
            asked
            or count is None  # PostgreSQL: woken only by changes
            or count != self._count
            or outside != self._outside
            or now - self._read_at >= FULL_READ
        ):
            return None
        self._count = None  # until this read succeeds
        snapshot = self.reader.read()
        self._count, self._outside, self._read_at = count, outside, now
        return snapshot
