"""``CodeReading``: when the console's code worker reads the agents' code, and the loop.

The reader's snapshots say when a turn ended (a session's state moved, a handover came or
went); only then is git asked again, in the worker's thread, through ``room.code``'s
tracker, which itself reads only the agents that moved. Nothing here polls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_room.adapters.git import GitCli
from agent_room.core.snapshot import RoomSnapshot
from agent_room.core.worktrees import CodeSnapshot
from agent_room.room.code import CodeTracker
from agent_room.room.service import Room


class CodeReading:
    """Owned by the app: ``moved`` from the event loop, ``run`` in the worker's thread."""

    def __init__(self) -> None:
        self.wake = threading.Event()
        self._key: tuple[object, ...] | None = None

    def moved(self, snapshot: RoomSnapshot) -> None:
        """A new snapshot: wake the worker if a session's state or the pending handovers
        changed since the code was last read for them."""
        key: tuple[object, ...] = tuple((s.name, s.state) for s in snapshot.sessions)
        key += tuple(h.id for h in snapshot.handovers)
        if key != self._key:
            self._key = key
            self.wake.set()

    def run(
        self,
        room: Room,
        stopped: Callable[[], bool],
        post: Callable[[CodeSnapshot], object],
        report: Callable[[str], None],
    ) -> None:
        """Read on each wake-up until ``stopped()``; post what changed; report a fault
        once (the next wake-up tries again: a passing fault never ends the worker)."""
        tracker = CodeTracker(room, GitCli())
        last: CodeSnapshot | None = None
        told = ""
        while True:
            self.wake.wait()
            self.wake.clear()
            if stopped():
                return
            try:
                code = tracker.refresh()
            except Exception as exc:  # noqa: BLE001 - reported, and tried again next turn
                if str(exc) != told:
                    told = str(exc)
                    report(told)
                continue
            told = ""
            if code != last:
                last = code
                post(code)
