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

PostgreSQL keeps no change count: there the count is the wake-ups the console's watch
heard, as the server tells the watchers of every commit that changes what the room
shows, and of no renewal (``commit_write``). Without a watch listening, every pass reads.

``Pace`` tells the reader how fast the room changes, by the events its log takes (one for
each change the operator sees, on either engine): while it takes many a second (agents
talking: a send, its nudge, its delivery, its reading, the turns it starts and ends) the
reader gathers the changes into a picture every ``READ_GAP``; a room that changes now and
then (a hook every few tenths of a second) shows each change at once.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from itertools import pairwise

from agent_room.core.snapshot import RoomSnapshot
from agent_room.room.snapshot import OUTSIDE_INTERVAL, SnapshotReader
from agent_room.store import views

FULL_READ = 30.0
"""Seconds between two reads of a room that nothing was written to: its ages and time
windows move on that often, as the console posts an unchanged room again (``AGE_REFRESH``)."""
BUSY_RATE = 8.0
"""Events of the room's log a second from which the reader gathers the changes into a
picture every ``READ_GAP``: agents sending two messages a second log about twelve (six a
message: sent, nudged, delivered, read, a turn begun and ended); an agent's hooks, one
every few tenths of a second, two to five."""
WINDOW = 1.0
"""Seconds over which the room's rate of change is taken (at the least)."""


class Pace:
    """The room's recent changes, as the reader's passes found its log's last event."""

    def __init__(self, *, busy_rate: float = BUSY_RATE, window: float = WINDOW) -> None:
        self.busy_rate = busy_rate
        self.window = window
        self._seen: deque[tuple[float, int]] = deque()

    def note(self, count: int, now: float) -> None:
        """A pass found the room's log at ``count`` events."""
        self._seen.append((now, count))
        while len(self._seen) > 1 and self._seen[1][0] <= now - self.window:
            self._seen.popleft()  # the oldest kept is the last at or before the window

    def busy(self) -> bool:
        """Whether the room changed at ``busy_rate`` or faster over the last ``window``.

        The changes a pass found are spread over the time since the pass before: after a
        pause they came all along it; after a quiet spell the reader, woken by the first
        change, finds it at once, so a stream that has just begun counts little (its
        first changes show at once)."""
        if len(self._seen) < 2:
            return False
        start = self._seen[-1][0] - self.window
        changes = 0.0
        for (before_at, before), (at, count) in pairwise(self._seen):
            if at <= start:
                continue
            span = at - before_at
            share = (at - max(before_at, start)) / span if span > 0 else 1.0
            changes += (count - before) * share
        return changes / self.window >= self.busy_rate


class Reading:
    """The reader thread's own: which passes read the room."""

    def __init__(
        self, reader: SnapshotReader, *, heard: Callable[[], int | None] | None = None
    ) -> None:
        self.reader = reader
        self.heard = heard
        """The wake-ups the room's watch heard, counted (None while it does not listen):
        the change count on PostgreSQL, where the room keeps none."""
        self._count: int | None = None
        """The room's change count at the last read (None: read at the next pass)."""
        self._outside: object = None
        """Claude Code's registry as the last read saw it."""
        self._listed: object = None
        self._listed_at = float("-inf")
        self._read_at = float("-inf")
        self.pace = Pace()
        """How fast the room changes, from the passes' looks at its log."""

    def read(self, *, timed: bool = False, asked: bool = False) -> RoomSnapshot | None:
        """The room now, or None when nothing shown can have changed since the last read.

        ``timed``: a safety pass (the processes' liveness check may be due); ``asked``:
        the operator asked for it."""
        if timed:  # a process found ended is written: the count below moves
            self.reader.check_liveness()
        store = self.reader.room.store
        count = store.changes()
        if count is None and self.heard is not None:
            count = self.heard()
        now = time.monotonic()
        self.pace.note(views.last_event_id(store), now)
        native = self.reader.native
        if native is not None and now - self._listed_at >= OUTSIDE_INTERVAL:
            self._listed, self._listed_at = native.sessions(), now
        outside = self._listed
        if not (
            asked
            or count is None  # PostgreSQL with no watch listening: every pass
            or count != self._count
            or outside != self._outside
            or now - self._read_at >= FULL_READ
        ):
            return None
        self._count = None  # until this read succeeds
        snapshot = self.reader.read()
        self._count, self._outside, self._read_at = count, outside, now
        return snapshot
