"""``Lease``: one worker's hold on a named lease in the room.

Exactly one deliverer and one injector act per room; the others stand by. The holder
renews now and then (every write wakes every watcher, so not on every pass) and gives
the lease up when it stops. A stand-by looks at the lease on its own clock, every three
seconds (``STANDBY_INTERVAL``), not at every change of the room
(``LeasedWorker.while_active``): it takes over at its next look once the holder gave the
lease up or its process is gone (pid and start time), or once the holder stopped
renewing for ``ttl`` seconds.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable

from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.procfs import read_stat
from agent_room.turn.store.delivery import DeliveryStore

LEASE_TTL = 9.0
"""Seconds a holder that stops renewing keeps its lease. A holder whose process is gone is
replaced at once (pid and start time, judged on its own host), so this only covers a
holder that hangs, or a host gone from a PostgreSQL room. Renewed every third of it: a
renewal is a write, and every write wakes every watcher of the room."""
RENEW_INTERVAL = LEASE_TTL / 3
"""Seconds between a holder's renewals: the longest a leased worker at rest sleeps."""
STANDBY_INTERVAL = RENEW_INTERVAL
"""Seconds between a stand-by's looks at its lease, as long as a holder at rest waits
between two renewals: it takes over within this of the holder giving the lease up or its
process ending. A console beside a background
deliverer stands by with four workers, so each look is one lease read a worker."""


class Lease:
    """A worker's side of one lease: hold it, renew it, release it."""

    def __init__(
        self, store: DeliveryStore, name: str, probe: ProcessProbe, *, ttl: float = LEASE_TTL
    ):
        self.store = store
        self.name = name
        self.probe = probe
        self.ttl = ttl
        self.holder = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        stat = read_stat(os.getpid())
        self.pid_start = stat.start_ticks if stat else None
        self.active = False
        """Whether this worker held the lease at its last pass."""
        self.standing_by = False
        """Whether this worker's last pass found the lease held by another."""
        self._renewed_at = 0.0

    def hold(self, now: float) -> bool:
        """Hold (or take, or renew) the lease; whether this worker may act now."""
        if self.active and now - self._renewed_at < self.ttl / 3:
            return True
        try:
            self.active = self.store.acquire_lease(
                self.name,
                holder=self.holder,
                pid=os.getpid(),
                pid_start=self.pid_start,
                ttl=self.ttl,
                at=now,
                alive=self.probe.is_alive,
            )
        except BaseException:
            self.active = False  # not renewed: act again only once it is held for sure
            raise
        self.standing_by = not self.active
        if self.active:
            self._renewed_at = now
        return self.active

    def release(self) -> None:
        """Give the lease up so a stand-by takes over at its next look (three seconds).

        A worker stopping on a full disk or a locked room cannot write: the lease then
        expires by itself (or is taken at once, once this process is gone)."""
        try:
            if self.active:
                self.store.release_lease(self.name, self.holder)
        except Exception:  # noqa: BLE001, S110 - expiry (ttl, pid) hands the lease over anyway
            pass
        finally:
            self.active = False


class LeasedWorker:
    """A worker of which one per room acts at a time, under its lease; the others stand by."""

    lease: Lease | None
    """None: this worker acts without a lease (a test's single worker)."""

    @property
    def active(self) -> bool:
        """Whether this worker held the lease at its last pass."""
        return self.lease is None or self.lease.active

    @property
    def standing_by(self) -> bool:
        """Whether this worker's last pass found its lease held by another: it looks
        again in ``STANDBY_INTERVAL``."""
        return self.lease is not None and self.lease.standing_by

    def release(self) -> None:
        """Give the lease up so a stand-by takes over at its next look (three seconds)."""
        if self.lease is not None:
            self.lease.release()

    def while_active(self, wake: Callable[[], None], stop: threading.Event) -> Callable[[], None]:
        """``wake`` for the room's changes, passed on only while this worker holds its
        lease, or once it is stopping (the room's watch wakes every listener as it ends).

        Only the holder acts on a change; a stand-by that passed at each one would only
        find the lease held again, four or five times a message. It looks at the lease on
        its own clock instead (its ``next_wait`` while standing by: ``STANDBY_INTERVAL``), so
        it takes over within that of the holder giving the lease up or its process
        ending."""

        needed = self.prompt(stop)

        def woken() -> None:
            if needed():
                wake()

        return woken

    def prompt(self, stop: threading.Event) -> Callable[[], bool]:
        """Whether this worker needs the room's next change at once (``RoomWatch``'s
        ``prompt``): while it holds its lease, or once it is stopping."""
        return lambda: self.active or stop.is_set()
