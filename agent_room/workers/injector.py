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

It wakes on changes to the room directory (a Stop hook's write; a burst of them makes
one pass, at most one every ``GAP``), when an agent's process ends (``adapters.exits``: a
session killed without its SessionEnd hook still severs its links), and when the next
timer is due; otherwise it sleeps as long as its lease allows (``REST_INTERVAL``). Where
a process cannot be watched it checks them all every ``LIVENESS_INTERVAL`` instead.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable

from agent_room.adapters.exits import Process, ProcessExits
from agent_room.room.crossing import Crossings
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.core.timers import wait_for
from agent_room.turn.room.registry import Registry
from agent_room.workers.guard import Guard
from agent_room.workers.lease import (
    LEASE_TTL,
    RENEW_INTERVAL,
    STANDBY_INTERVAL,
    Lease,
    LeasedWorker,
)
from agent_room.workers.wakeup import ChangePipe, RoomWatch, room_changes

LEASE = "injector"
LIVENESS_INTERVAL = 2.0
"""Seconds between checks that the agents' processes still run, where the kernel cannot
say when they end (no pidfds, a process that cannot be watched)."""
SAFETY_INTERVAL = LIVENESS_INTERVAL
"""The longest sleep between passes while the processes are checked by looking, or
while standing by: timers wake it when due, room changes at once."""
REST_INTERVAL = RENEW_INTERVAL
"""The longest sleep while every process is watched: as often as the lease is renewed."""
GAP = 0.2
"""The shortest time (seconds) between the starts of two passes woken by the room's
changes: a message makes several changes (sent, delivered, a turn begun and ended, a
receipt), and a burst of them makes one pass. A turn that ends on a link crosses at
most this much later; an agent's process that ends is heard at once."""


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
        exits: ProcessExits | None = None,
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
        self.exits = exits
        """The kernel's word when an agent's process ends; None: look every
        ``LIVENESS_INTERVAL``."""
        self._watched = False
        """Whether every live session's process is watched by ``exits``."""

    def run_once(self) -> bool:
        """One pass: liveness now and then, crossings, due timers. False when standing by."""
        now = self.room.clock()
        if self.lease is not None and not self.lease.hold(now):
            return False
        self._check_processes(now)
        self.crossings.run_once()
        self.links.fire_due()
        return True

    def _check_processes(self, now: float) -> None:
        """End the sessions whose process is gone: when one of the watched processes
        ended, else (nothing watched) every ``LIVENESS_INTERVAL``. Sessions that came
        since the last pass are watched from now on."""
        exits = self.exits
        if exits is not None and self._watched:
            if not exits.ended():
                self._watched = exits.watch(self._processes())
                if self._watched:
                    return
        elif now - self._checked_at < LIVENESS_INTERVAL:
            return
        self._checked_at = now
        self.registry.refresh()
        if exits is not None:
            # an ended process still watched (its session not ended: the room's own check
            # disagrees) would wake the worker at once for ever: look instead
            self._watched = exits.watch(self._processes()) and not exits.ended()

    def _processes(self) -> list[Process]:
        return [(int(r["pid"]), r["pid_start"]) for r in self.store.live_pids()]

    def next_wait(self) -> float:
        """Seconds until the next pass is needed: the next timer, at most the safety net
        (the lease's renewal while every process is watched); a stand-by looks at its
        lease at its own pace (its holder fires the timers)."""
        if self.standing_by:
            return STANDBY_INTERVAL
        ceiling = REST_INTERVAL if self._watched and self.active else SAFETY_INTERVAL
        return wait_for(self.links.next_due(), self.room.clock(), ceiling)

    def wait(self, changed: ChangePipe, timeout: float) -> bool:
        """Sleep until the room changes, a watched process ends, or ``timeout`` seconds
        pass; whether the room changed (and no process ended)."""
        if self.exits is not None and self._watched:
            woken, ended = self.exits.wait(changed.fd, timeout)
        else:
            woken, ended = bool(select.select([changed.fd], [], [], max(0.0, timeout))[0]), False
        if woken:
            changed.drain()
        return woken and not ended

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

        changed = ChangePipe()
        try:
            wake = self.while_active(changed.signal, stop)
            with room_changes(
                self.room_watch, self.room.home, stop, wake, prompt=self.prompt(stop)
            ):
                started = time.monotonic()
                one_pass()
                while not stop.is_set():
                    if guard.failures:  # wait the fault out: file events do not hurry a retry
                        stop.wait(guard.pause(SAFETY_INTERVAL))
                    else:
                        wait = guard.run(self.next_wait)
                        if self.wait(changed, SAFETY_INTERVAL if wait is None else wait):
                            # the rest of the burst joins this pass (a change in the gap's
                            # tail is read by it: taken just before the pass)
                            stop.wait(max(0.0, started + GAP - time.monotonic()))
                            changed.drain()
                    if not stop.is_set():
                        started = time.monotonic()
                        one_pass()
        finally:
            self.release()
            if self.exits is not None:
                self.exits.close()
            changed.close()
