"""The memory worker: follows live sessions' transcripts, prepares handover contexts,
checkpoints sessions that ended, and reads what the agents spent (``room.usage``).

Embedded in ``agent-room watch`` and the console next to the deliverer and the
injector, under its host's lease (one acts per host, the others on that host stand by):
a transcript is a file of its session's host, so each host's worker reads its own
host's transcripts, prepares the contexts of its own agents' handovers and checkpoints
its own sessions, into the one room every host builds contexts and resumes from. It
polls: a context must be ready before the operator decides, which takes seconds, and a
handover approved before the worker got to it is prepared by the approving process
instead. A fault in a pass (an unreadable transcript is not one: it is logged and
skipped) is reported and retried after a pause that grows (``workers.guard``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from agent_room.core.ports import ProcessProbe
from agent_room.room import Room
from agent_room.room.budgets import Budgets
from agent_room.room.checkpoints import Checkpoints
from agent_room.room.entities import Entities
from agent_room.room.memory import PROBLEM, Memory
from agent_room.room.usage import PASS_BUDGET, Usage
from agent_room.workers.guard import Guard
from agent_room.workers.lease import LEASE_TTL, Lease, LeasedWorker

LEASE = "memory"
INTERVAL = 1.0
"""Seconds between passes."""
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
    ) -> None:
        self.room = room
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
        self.memory.prepare_pending()
        self.checkpoints.before_compactions()  # before the transcripts show the compaction
        self.memory.follow_live()
        self.checkpoints.at_session_ends()
        self.entities.scan_messages()
        if self.usage.follow_live(budget=PASS_BUDGET):  # every client's records, this host's
            self.budgets.check()  # (a budget set is checked by the command that sets it)
        now = self.room.clock()
        if now - self._pruned_at >= PRUNE_INTERVAL:
            self._pruned_at = now
            self.memory.prune()
        return True

    def run(
        self,
        stop: threading.Event,
        *,
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        """Work until ``stop`` is set, a pass every ``INTERVAL``. A failed pass is
        reported to ``on_problem`` (standard error if not given) and to the room's log,
        and retried, less often while the fault lasts."""
        guard = Guard("memory", self.room.store, on_problem)

        def after(active: bool | None) -> None:
            if guard.error is not None:
                self._log(guard.error)
            elif on_pass is not None and active is not None:
                on_pass(active)

        try:
            guard.poll(stop, self.run_once, INTERVAL, after)
        finally:
            self.release()
