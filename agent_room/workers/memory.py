"""The memory worker: follows live sessions' transcripts, prepares handover contexts,
checkpoints sessions that ended, and reads what the agents spent (``room.usage``).

Embedded in ``agent-room watch`` and the console next to the deliverer and the
injector, under its host's lease (one acts per host, the others on that host stand by):
a transcript is a file of its session's host, so each host's worker reads its own
host's transcripts, prepares the contexts of its own agents' handovers and checkpoints
its own sessions, into the one room every host builds contexts and resumes from. It
passes when the room changes (a handover sent, a turn begun or ended; a burst of changes
makes one pass, at most one every ``GAP``), every second while an agent of its host is
in a turn (its transcript grows) or a backlog is read, and otherwise as often as it
renews its lease: a context must be ready before the operator
decides, which takes seconds, and a handover approved before the worker got to it is
prepared by the approving process instead. A fault in a pass (an unreadable transcript
is not one: it is logged and skipped) is reported and retried after a pause that grows
(``workers.guard``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from agent_room.room.budgets import Budgets
from agent_room.room.checkpoints import Checkpoints
from agent_room.room.entities import Entities
from agent_room.room.memory import PROBLEM, Memory
from agent_room.room.service import Room
from agent_room.room.usage import PASS_BUDGET, Usage
from agent_room.store import memory as store_memory
from agent_room.turn.core.ports import ProcessProbe
from agent_room.workers.guard import Guard
from agent_room.workers.lease import (
    LEASE_TTL,
    RENEW_INTERVAL,
    STANDBY_INTERVAL,
    Lease,
    LeasedWorker,
)
from agent_room.workers.wakeup import RoomWatch, room_changes

LEASE = "memory"
INTERVAL = 1.0
"""Seconds between passes while an agent of this host is in a turn or a pass found work."""
REST_INTERVAL = RENEW_INTERVAL
"""Seconds between passes with every agent of this host between turns (what changes in
the room wakes the worker at once)."""
GAP = 0.5
"""The shortest time (seconds) between the starts of two passes woken by the room's
changes: a message makes several changes (sent, delivered, a turn begun and ended, a
receipt), and a burst of them makes one pass. A handover's context has seconds (the
operator decides), a transcript is followed every second anyway."""
PRUNE_INTERVAL = 3600.0
"""Seconds between clear-outs of old sessions' memory."""


def memory_lease(host: str) -> str:
    """The memory worker's lease on ``host``: one per host, on either engine, since a
    transcript is read on its own host only (one host: one lease, as in a room on one
    machine)."""
    return f"{LEASE}@{host}"


class MemoryWorker(LeasedWorker):
    """One memory worker for one host of a room."""

    def __init__(
        self,
        room: Room,
        probe: ProcessProbe,
        *,
        lease_ttl: float = LEASE_TTL,
        use_lease: bool = True,
        room_watch: RoomWatch | None = None,
    ) -> None:
        self.room = room
        self.room_watch = room_watch
        """The process's one watch of the room; None: ``run`` keeps a watch of its own."""
        self._timed = True
        """Whether the last pass found work or an agent in a turn (see ``next_wait``)."""
        self.memory = Memory(room)
        self.checkpoints = Checkpoints(room)
        self.entities = Entities(room)
        self.usage = Usage(room)
        self.budgets = Budgets(room)
        self._pruned_at = 0.0
        self.lease = (
            Lease(room.store, memory_lease(room.store.host), probe, ttl=lease_ttl)
            if use_lease
            else None
        )

    def _log(self, exc: Exception) -> None:
        """The room's audit log hears of a failed pass (if the room can be written)."""
        with contextlib.suppress(Exception):  # the room itself is out of reach: retry later
            self.room.store.logevent(
                PROBLEM, "room", at=self.room.clock(), data={"problem": f"a pass failed: {exc}"}
            )

    def run_once(self) -> bool:
        """One pass: pending handovers' contexts first, then the live transcripts.
        False when standing by."""
        if self.lease is not None and not self.lease.hold(self.room.clock()):
            return False
        prepared = self.memory.prepare_pending()
        self.checkpoints.before_compactions()  # before the transcripts show the compaction
        followed = self.memory.follow_live()
        self.checkpoints.at_session_ends()
        named = self.entities.scan_messages()
        spent = self.usage.follow_live(budget=PASS_BUDGET)  # every client's records, this host's
        if spent:
            self.budgets.check()  # (a budget set is checked by the command that sets it)
        now = self.room.clock()
        if now - self._pruned_at >= PRUNE_INTERVAL:
            self._pruned_at = now
            self.memory.prune()
        found = bool(prepared or followed or named or spent)
        self._timed = found or store_memory.in_turn_here(self.room.store)
        return True

    def next_wait(self) -> float:
        """Seconds until the next pass if the room does not change: a second while an
        agent of this host is in a turn or a pass found work, at a stand-by's pace while
        standing by, else at rest."""
        if self.standing_by:
            return STANDBY_INTERVAL
        return INTERVAL if self._timed else REST_INTERVAL

    def run(
        self,
        stop: threading.Event,
        *,
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        """Work until ``stop`` is set: when the room changes, and every ``next_wait``. A
        failed pass is reported to ``on_problem`` (standard error if not given) and to the
        room's log, and retried, less often while the fault lasts."""
        guard = Guard("memory", self.room.store, on_problem)

        def after(active: bool | None) -> None:
            if guard.error is not None:
                self._log(guard.error)
            elif on_pass is not None and active is not None:
                on_pass(active)

        woken = threading.Event()
        try:
            wake = self.while_active(woken.set, stop)
            with room_changes(
                self.room_watch, self.room.home, stop, wake, prompt=self.prompt(stop)
            ):
                guard.poll(stop, self.run_once, self.next_wait, after, woken=woken, gap=GAP)
        finally:
            self.release()
