"""``CodeReading``: when the console's code worker reads the agents' code, and the loop.

Woken by the room's file watch and the reader's snapshots, the worker passes over a
wake-up that left the room's change count where it was (a lease renewed, at rest), and
otherwise asks ``room.code``'s tracker, which runs git only for the agents whose session
moved since it last looked: a turn that ended. Nothing here polls. While agents talk the
room changes several times a message; the wake-ups within ``GAP`` of a pass's start make
one more pass at the gap's end (a branch or a diff shows within a second of the turn
that made it, well within the console's pace of pictures).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agent_room.adapters.git import GitCli
from agent_room.core.overlaps import CodeSnapshot
from agent_room.core.snapshot import RoomSnapshot
from agent_room.room.code import CodeTracker
from agent_room.room.service import Room

GAP = 1.0
"""Seconds from one pass's start to the next at the least."""


class CodeReading:
    """Owned by the app: ``moved`` and ``stop`` from the event loop, ``run`` in the
    worker's thread."""

    def __init__(self, gap: float = GAP) -> None:
        self.wake = threading.Event()
        self.gap = gap
        self._stopping = threading.Event()

    def stop(self) -> None:
        """End ``run`` now, even within a gap."""
        self._stopping.set()
        self.wake.set()

    def moved(self, snapshot: RoomSnapshot) -> None:
        """The reader posted a new snapshot (it posts only when what it shows changed):
        let the tracker look. Its own check is a few indexed reads; git runs only for the
        agents whose session moved (a turn that ended), however the snapshots fell."""
        del snapshot
        self.wake.set()

    def run(
        self,
        room: Room,
        stopped: Callable[[], bool],
        post: Callable[[CodeSnapshot], object],
        report: Callable[[str], object],
    ) -> None:
        """Read on each wake-up until ``stopped()``; post what changed; report a fault
        once (the next wake-up tries again: a passing fault never ends the worker)."""
        tracker = CodeTracker(room, GitCli())
        last: CodeSnapshot | None = None
        told = ""
        seen: int | None = None
        started = float("-inf")
        while True:
            self.wake.wait()
            left = started + self.gap - time.monotonic()
            if left > 0 and self._stopping.wait(left):  # the burst's next changes wait
                return
            self.wake.clear()  # taken just before the pass: a change in the gap is read
            if stopped() or self._stopping.is_set():
                return
            started = time.monotonic()
            try:
                # most wake-ups at rest are leases renewed: the room's change count stands
                count = room.store.changes()
                if count is not None and count == seen and not tracker.pending:
                    continue
                code = tracker.refresh()
                seen = count
                if tracker.pending:  # pairs left for another pass: make it now
                    self.wake.set()
            except Exception as exc:  # noqa: BLE001 - reported, and tried again next turn
                if str(exc) != told:
                    told = str(exc)
                    report(told)
                continue
            told = ""
            if code != last:
                last = code
                post(code)
