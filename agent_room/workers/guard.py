"""``Guard``: what keeps a background worker alive through faults that pass by themselves.

The room's write lock held past the busy timeout, a full disk, a damaged database
restored from a backup, the write-ahead log deleted under the process: none of these
may end a worker. A pass that fails is reported (once per new problem, and once when
work goes on again), the connection is made usable again, and the next pass waits a
little longer each time, up to ``MAX_BACKOFF``. A database file replaced or a log
deleted under the process is noticed before each pass and the room reopened.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from agent_room.turn.core.errors import UNREACHABLE_PREFIX, RoomError
from agent_room.turn.store.sqlite_base import StoreBase

T = TypeVar("T")

FIRST_BACKOFF = 0.5
"""Seconds before the first retry after a failed pass; doubled on each failure."""
MAX_BACKOFF = 30.0
"""The longest wait between two tries while a fault lasts."""


def describe(exc: BaseException) -> str:
    """The problem in one line, as a person reads it in a log or a status bar."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, RoomError):
        return text
    if type(exc).__module__ == "sqlite3" and not text.startswith(UNREACHABLE_PREFIX):
        return f"the room database: {text}"
    return f"{type(exc).__name__}: {text}"


def to_stderr(worker: str) -> Callable[[str | None], None]:
    """A report that prints a worker's problems (and its recovery) on standard error."""

    def report(problem: str | None) -> None:
        if problem is None:
            print(f"agent-room: {worker}: working again", file=sys.stderr, flush=True)
        else:
            print(
                f"agent-room: {worker}: {problem} (trying again, less often while it lasts)",
                file=sys.stderr,
                flush=True,
            )

    return report


class Guard:
    """Runs one worker's passes; never lets a fault out."""

    def __init__(
        self, worker: str, store: StoreBase, report: Callable[[str | None], None] | None = None
    ) -> None:
        self.worker = worker
        self.store = store
        self.report = report or to_stderr(worker)
        """Told each new problem, and ``None`` when a pass succeeds again."""
        self.failures = 0
        """Passes failed in a row."""
        self.problem: str | None = None
        """The last problem reported, while it lasts."""
        self.error: Exception | None = None
        """The exception of the last failed pass."""

    def run(self, one_pass: Callable[[], T]) -> T | None:
        """Run ``one_pass``; its result, or None when it failed (reported, to be retried)."""
        try:
            self.store.reopen_if_moved()
            result = one_pass()
        except Exception as exc:  # noqa: BLE001 - a passing fault must not end the worker
            self._failed(exc)
            return None
        if self.failures:
            self.failures = 0
            self.problem = self.error = None
            self.report(None)
        return result

    def poll(
        self,
        stop: threading.Event,
        one_pass: Callable[[], T],
        interval: float | Callable[[], float],
        after: Callable[[T | None], None],
        *,
        woken: threading.Event | None = None,
        gap: float = 0.0,
    ) -> None:
        """Run ``one_pass`` every ``interval`` (longer while failing) until ``stop`` is set;
        ``after`` gets each pass's result (None when it failed). ``interval`` may be asked
        after each pass; ``woken`` (set by the room's changes, and by its watch ending at
        ``stop``) starts the next pass, except while a fault lasts: at once, or, within
        ``gap`` seconds of the last pass's start, at the end of that gap, so that the
        changes of a burst (one message makes several, a few tens of ms apart) make one
        pass. A change in the gap's tail is not lost: ``woken`` is cleared only just
        before the pass that reads it."""
        while not stop.is_set():
            started = time.monotonic()
            after(self.run(one_pass))
            wait = interval() if callable(interval) else interval
            if woken is None or self.failures:
                stop.wait(self.pause(wait))
                continue
            if woken.wait(wait) and gap > 0:
                stop.wait(max(0.0, started + gap - time.monotonic()))
            woken.clear()

    def pause(self, normal: float) -> float:
        """How long to wait before the next pass: ``normal``, or longer while failing."""
        if not self.failures:
            return normal
        return min(max(normal, FIRST_BACKOFF * 2.0 ** (self.failures - 1)), MAX_BACKOFF)

    def _failed(self, exc: Exception) -> None:
        self.failures += 1
        self.error = exc
        self.store.recover()
        problem = describe(exc)
        if problem != self.problem:
            self.problem = problem
            self.report(problem)
