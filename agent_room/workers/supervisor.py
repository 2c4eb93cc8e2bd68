"""``Supervisor``: runs a process's leased workers, the one way every process runs them.

``agent-room watch`` (in a terminal, or in the background that ``start`` launches) and
the console run the same workers: the deliverer, the link injector, the memory worker and
the notifier. Each runs in a thread of its own on a connection of its own (a slow tmux
command in the deliverer never delays a crossing or a timer), under its lease: one
process per room (per host, for memory) acts, the others stand by and take over within
three seconds of the holder stopping (``STANDBY_INTERVAL``), since a worker gives its lease
up when it ends.

A passing fault (the room locked, a full disk) never ends a worker: its ``Guard`` retries
and the supervisor passes the news on. A fault nobody foresaw ends the worker's run; the
supervisor says so and starts it again, on a fresh connection, after ``restart_delay``.
What happens is told to one callback, as ``Report``s: the console shows them in its status
bar, the watch writes the problems on standard error.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from agent_room.adapters.exits import ProcessExits
from agent_room.core.ports import Multiplexer
from agent_room.room.service import Room
from agent_room.turn.core.ports import ProcessProbe
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.guard import describe
from agent_room.workers.injector import Injector
from agent_room.workers.memory import MemoryWorker
from agent_room.workers.native import native_delivery
from agent_room.workers.wakeup import RoomWatch

RESTART_DELAY = 5.0
"""Seconds before a worker ended by an unforeseen fault is started again."""
JOIN_TIMEOUT = 10.0
"""How long ``join`` waits for the workers to end their pass and give their leases up."""


class State(StrEnum):
    """What a supervised worker is doing, as its ``Report`` says."""

    ACTIVE = "active"
    """It holds its lease and works."""
    STANDBY = "standby"
    """Another process holds the lease; this one takes over when that one stops."""
    RETRYING = "retrying"
    """A pass failed (``Report.detail`` says why); it tries again, less often while the
    fault lasts."""
    RECOVERED = "recovered"
    """A pass worked again after a fault (its next pass says active or standby)."""
    FAILED = "failed"
    """An unforeseen fault ended its run (``detail``); started again after the delay."""
    OFF = "off"
    """Stopped."""


@dataclass(frozen=True)
class Report:
    """One worker's news, for the supervisor's ``on_report``."""

    worker: str
    """The job's name: ``deliverer``, ``injector``, ``memory`` or ``notifier``."""
    state: State
    detail: str | None = None
    """The problem, for ``RETRYING`` and ``FAILED``."""


class RoomWorker(Protocol):
    """A leased worker: passes until ``stop`` is set, telling each pass's outcome."""

    def run(
        self,
        stop: threading.Event,
        *,
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        """Work until ``stop`` is set: ``on_pass(active)`` after each pass that worked,
        ``on_problem`` with a failed pass's problem and ``None`` once one works again."""


@dataclass(frozen=True)
class Job:
    """A worker to run: its name, and how to make it on the connection given to it."""

    name: str
    make: Callable[[Room], RoomWorker]


def room_jobs(
    mux: Multiplexer, probe: ProcessProbe, room_watch: RoomWatch, environ: Mapping[str, str]
) -> list[Job]:
    """The deliverer, the injector and the memory worker, as every process runs them:
    each woken by the process's one watch of the room (the notifier's channels
    depend on who runs it: each caller adds its own)."""
    return [
        Job(
            "deliverer",
            lambda room: Deliverer(
                room, mux, probe, native=native_delivery(room, environ), room_watch=room_watch
            ),
        ),
        Job(
            "injector",
            lambda room: Injector(
                room, probe, room_watch=room_watch, exits=ProcessExits(probe.is_alive)
            ),
        ),
        Job("memory", lambda room: MemoryWorker(room, probe, room_watch=room_watch)),
    ]


class Supervisor:
    """Runs jobs in threads until stopped, restarting one that an unforeseen fault ends."""

    def __init__(
        self,
        open_room: Callable[[], Room],
        on_report: Callable[[Report], None],
        *,
        stop: threading.Event | None = None,
        restart_delay: float = RESTART_DELAY,
    ) -> None:
        self.open_room = open_room
        """A fresh connection to the room, one per worker run."""
        self.on_report = on_report
        """Told every worker's news, from the worker's own thread."""
        self.stop_event = stop or threading.Event()
        """Set: every worker ends its pass, gives its lease up and stops."""
        self.restart_delay = restart_delay
        """Seconds before a failed worker starts again; 0: it stays down."""
        self._threads: list[threading.Thread] = []

    def start(self, jobs: Iterable[Job]) -> None:
        """Run each job in a thread of its own."""
        for job in jobs:
            # not a daemon: a process that ends waits for its workers to give their
            # leases up, so that a stand-by elsewhere takes over at its next look
            thread = threading.Thread(
                target=self._supervise, args=(job,), name=f"agent-room-{job.name}"
            )
            self._threads.append(thread)
            thread.start()

    def stop(self) -> None:
        """Tell every worker to stop (they finish their pass and release their lease)."""
        self.stop_event.set()

    def join(self, timeout: float = JOIN_TIMEOUT) -> None:
        """Wait for the workers to end (after ``stop``), at most ``timeout`` in all."""
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _supervise(self, job: Job) -> None:
        """Run ``job`` until stopped; after an unforeseen fault, again after the delay."""
        while not self.stop_event.is_set():
            try:
                self._run(job)
            except Exception as exc:  # noqa: BLE001 - told, and the worker started again
                self.on_report(Report(job.name, State.FAILED, describe(exc)))
                if self.restart_delay <= 0:
                    return  # it stays down, and says so
                if self.stop_event.wait(self.restart_delay):
                    break
            else:
                break
        self.on_report(Report(job.name, State.OFF))

    def _run(self, job: Job) -> None:
        """One run of ``job`` on a connection of its own, its news passed on."""
        shown: list[bool | None] = [None]

        def on_pass(active: bool) -> None:
            if active != shown[0]:
                shown[0] = active
                self.on_report(Report(job.name, State.ACTIVE if active else State.STANDBY))

        def on_problem(problem: str | None) -> None:
            shown[0] = None  # the next good pass says active or standby again
            if problem is None:
                self.on_report(Report(job.name, State.RECOVERED))
            else:
                self.on_report(Report(job.name, State.RETRYING, problem))

        room = self.open_room()
        try:
            job.make(room).run(self.stop_event, on_pass=on_pass, on_problem=on_problem)
        finally:
            room.close()
