"""The loop breaker's second trip: two agents messaging each other while their spending
runs fast.

A pair can burn money at a pace the message count misses: few messages, each answered
by long, expensive turns. When ``sender`` writes to ``recipient`` after ``recipient``
wrote to ``sender`` within the window, and the two together spent at least the limit
in that window (the usage the room read from their clients' records), the message is
held like a loop's (``core.loops``): the operator releases it with ``agent-room loops
release``, and the pair's spending counts afresh from the release. Light enough for
``agent-room send``'s path: no imports.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

DEFAULT_LIMIT = 5.0
"""Dollars two agents may spend together within the window while messaging each other:
a runaway pair of large models (a turn a few seconds, each reading a long cached
context) spends that in minutes; agents that work between messages take hours."""
DEFAULT_WINDOW = 600.0
"""Seconds over which the pair's spending is counted."""
LIMIT_KEY = "fleet_loop_cost"
WINDOW_KEY = "fleet_loop_cost_window"
"""The room settings that hold them (``agent-room budget pair``); a limit of 0 is off."""


def settings_from(raw: Mapping[str, Any]) -> tuple[float, float]:
    """(limit, window) from stored values; defaults for missing or unusable ones."""
    limit = raw.get(LIMIT_KEY)
    window = raw.get(WINDOW_KEY)
    return (
        float(limit) if isinstance(limit, int | float) and limit >= 0 else DEFAULT_LIMIT,
        float(window) if isinstance(window, int | float) and window > 0 else DEFAULT_WINDOW,
    )


def describe(limit: float, window: float) -> str:
    """The setting as ``agent-room budget pair`` shows it."""
    if not limit:
        return "off"
    return f"${limit:g} per {window:g} s (two agents messaging each other, together)"
