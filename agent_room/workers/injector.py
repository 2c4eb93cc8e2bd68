"""The link injector: turns that finish on a link cross to the peer; due timers fire.

A background worker with the deliverer's shape (a single pass, and a run loop with a
stop event), so the console can embed it in a thread worker and ``agent-room watch``
runs it headless. It never types anything: what crosses becomes a room message that
the deliverer and the recipient's hooks carry, so the delivery rules (idle pane, open
dialog, busy agent) hold for link input too.

Any number of injectors may run: one holds the room's ``injector`` lease and works,
the others stand by. Correctness does not rest on the lease: a turn's verdict has a
primary key and each state change is a compare and set, so two injectors racing (a
lease handed over mid-pass) still cross each turn once.

It wakes on changes to the room directory (a Stop hook's write) and otherwise sleeps
until the next timer is due, at most ``SAFETY_INTERVAL``; it also re-checks the
agents' processes now and then, so a session killed without its SessionEnd hook still
severs its links.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agent_room.core.ports import ProcessProbe
from agent_room.core.timers import wait_for
from agent_room.room import Room
from agent_room.room.crossing import Crossings
from agent_room.room.links import Links
from agent_room.room.registry import Registry
from agent_room.workers.guard import Guard
from agent_room.workers.lease import LEASE_TTL, Lease, LeasedWorker
from agent_room.workers.wakeup import RoomWatch, own_watch

LEASE = "injector"
LIVENESS_INTERVAL = 2.0
"""Seconds between checks that the linked agents' processes still run."""
SAFETY_INTERVAL = LIVENESS_INTERVAL
"""The longest sleep between passes (file events can be lost): the pass that checks
liveness is the safety net; timers wake it when due, room changes at once."""


class Injector(LeasedWorker):
    """One link injector for one room."""

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
        self.store = room.store
        self.probe = probe
        self.crossings = Crossings(room)
        self.links = Links(room)
        self.registry = Registry(room, probe)
        self.lease = Lease(self.store, LEASE, probe, ttl=lease_ttl) if use_lease else None
        self._checked_at = 0.0
        self.room_watch = room_watch
        """The process's one watch of the room; None: ``run`` keeps a watch of its own."""

    def run_once(self) -> bool:
        """One pass: liveness now and then, crossings, due timers. False when standing by."""
        now = self.room.clock()
        if self.lease is not None and not self.lease.hold(now):
            return False
        if now - self._checked_at >= LIVENESS_INTERVAL:
            self._checked_at = now
            self.registry.refresh()
        self.crossings.run_once()
        self.links.fire_due()
        return True

    def next_wait(self) -> float:
        """Seconds until the next pass is needed: the next timer, at most the safety net."""
        return wait_for(self.links.next_due(), self.room.clock(), SAFETY_INTERVAL)

    def run(
        self,
        stop: threading.Event,
        *,
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        """Inject until ``stop`` is set: on every room change, and when a timer is due.

        ``on_pass(active)``, ``on_problem`` and the room's watch are as the deliverer's; a
        failed pass is retried, less often while the fault lasts.
        """
        guard = Guard("injector", self.store, on_problem)

        def one_pass() -> None:
            active = guard.run(self.run_once)
            if on_pass is not None and active is not None:
                on_pass(active)

        wake = threading.Event()
        watcher = self.room_watch or own_watch(self.room.home, stop)
        watcher.subscribe(wake.set)
        try:
            one_pass()
            while not stop.is_set():
                if guard.failures:  # wait the fault out: file events do not hurry a retry
                    stop.wait(guard.pause(SAFETY_INTERVAL))
                else:
                    wait = guard.run(self.next_wait)
                    wake.wait(SAFETY_INTERVAL if wait is None else wait)
                wake.clear()
                if not stop.is_set():
                    one_pass()
        finally:
            self.release()
            watcher.unsubscribe(wake.set)
            if watcher is not self.room_watch:
                watcher.close()
                watcher.join(timeout=5)
