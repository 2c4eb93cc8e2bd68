"""The one poller of the tests: wait until a check holds, or fail saying what was awaited.

Real tmux servers, processes and databases answer in their own time, so a test waits
for what it checks rather than sleeping. libtmux's ``retry_until`` returns only a bool;
this one returns the check's value (``pane = wait_for(find_pane)``) and works outside
the tmux tier too. ``poll`` is the same wait that gives up quietly, for a step that is
tried again when it did not take (an Enter a client dropped). Two waits stay apart
because their checks need another loop to run between tries: a Textual app under a
``Pilot`` waits with ``tests.ui.conftest.until`` (the app's event loop), and a page of
the browser tier with ``tests.browser.conftest.Screen.shows`` (Playwright hands over
a page's frames only inside its own calls).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll(check: Callable[[], T], timeout: float = 10.0, step: float = 0.05) -> T:
    """``check()``'s first truthy value, tried every ``step`` seconds; after ``timeout``
    seconds its last value, falsy: the caller decides what giving up means."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


def wait_for(
    check: Callable[[], T], timeout: float = 10.0, step: float = 0.05, what: str | None = None
) -> T:
    """``check()``'s first truthy value, tried every ``step`` seconds; an AssertionError
    naming ``what`` (or the check) and its last value after ``timeout`` seconds."""
    value = poll(check, timeout, step)
    if not value:
        raise AssertionError(
            f"timed out after {timeout}s waiting for {what or check} (last: {value!r})"
        )
    return value
