"""Timers with intent: ANCHOR (back to your own work), CHECK (look at a peer), WAIT.

Pure. A timer is the agent's own breadcrumb: when it fires, ``ANCHOR: TEXT`` reaches the
agent through the room's normal delivery path. The anchoring rule (an agent in a link
always keeps an anchor pointed at its own work) is checked here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import StrEnum

from agent_room.core.errors import BadInput

MAX_DURATION = 7 * 24 * 3600.0
"""A week: a timer is a heartbeat, not a calendar."""
MAX_TEXT = 2000
"""Characters of a timer's text: a breadcrumb, not a document."""

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")


class Intent(StrEnum):
    """What the agent means to do when the timer fires."""

    ANCHOR = "anchor"
    """Return to your own work. Non-negotiable; always keep one."""
    CHECK = "check"
    """Read another agent's status; look, do not message."""
    WAIT = "wait"
    """You asked a question: check whether the answer arrived."""


class TimerState(StrEnum):
    """A timer's life."""

    PENDING = "pending"
    FIRED = "fired"
    CANCELLED = "cancelled"


def parse_duration(text: str) -> float:
    """Seconds in ``90s``, ``5m``, ``1h``, ``1h30m``, ``2d`` (a bare number is seconds)."""
    raw = text.strip().lower()
    if re.fullmatch(r"\d+(?:\.\d+)?", raw):
        seconds = float(raw)
    elif raw and re.fullmatch(f"(?:{_PART.pattern})+", raw):
        seconds = sum(float(n) * _UNITS[u] for n, u in _PART.findall(raw))
    else:
        raise BadInput(f"invalid duration {text!r}: use e.g. 90s, 5m, 1h or 1h30m")
    if seconds <= 0:
        raise BadInput(f"invalid duration {text!r}: it must be more than zero")
    if seconds > MAX_DURATION:
        raise BadInput(f"invalid duration {text!r}: at most 7d")
    return seconds


def format_duration(seconds: float) -> str:
    """The short form of a number of seconds: ``90`` -> ``1m30s``."""
    left = max(0, round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    if left or not parts:
        parts.append(f"{left}s")
    return "".join(parts)


def parse_intent(text: str) -> Intent:
    """An intent by name, case-insensitive."""
    try:
        return Intent(text.strip().lower())
    except ValueError:
        raise BadInput(f"invalid timer intent {text!r}: use anchor, check or wait") from None


def check_text(text: str) -> str:
    """A timer's text: one line or a few, not empty, not huge, no control characters."""
    cleaned = text.strip()
    if not cleaned:
        raise BadInput("a timer needs a text: what to do when it fires")
    if len(cleaned) > MAX_TEXT:
        raise BadInput(f"a timer's text is at most {MAX_TEXT} characters")
    if any(ord(ch) < 0x20 and ch not in "\n\t" for ch in cleaned):
        raise BadInput("a timer's text cannot contain control characters")
    return cleaned


def fired_text(intent: Intent | str, text: str) -> str:
    """What reaches the agent when the timer fires: ``ANCHOR: TEXT``."""
    return f"{Intent(intent).value.upper()}: {text}"


def next_due(due_times: Iterable[float]) -> float | None:
    """The earliest due time, for the watcher's wait; None without pending timers."""
    return min(due_times, default=None)


def wait_for(due: float | None, now: float, ceiling: float) -> float:
    """How long the watcher may sleep: until the next timer, at most ``ceiling``."""
    if due is None:
        return ceiling
    return max(0.0, min(ceiling, due - now))


def unanchored(linked: Iterable[str], anchored: Sequence[str]) -> set[str]:
    """Names in a live link without a pending anchor timer: they break the anchoring rule."""
    return set(linked) - set(anchored)
