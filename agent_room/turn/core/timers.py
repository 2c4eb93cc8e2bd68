"""Timers with intent: ANCHOR (back to your own work), CHECK (look at a peer), WAIT.

Pure. A timer is the agent's own breadcrumb (seed 001): when it fires, ``ANCHOR: TEXT``
reaches the agent through the room's normal delivery path, framed as its own intent and
never as a peer's request (no "present it to the user"). A CHECK carries the named
peer's status, since checking means reading, not messaging. The anchoring rule (an agent
in a link always keeps an anchor pointed at its own work, and sets a new one before it
answers across a link) is checked here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from agent_room.turn.core.errors import BadInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


_FIRED = re.compile(r"(ANCHOR|CHECK|WAIT): ")
ROOM = "room"
"""The sender of a fired timer's message: the room itself, which no agent can be."""


def fired_intent(row: Mapping[str, Any]) -> Intent | None:
    """The intent of a message that is a fired timer (the room's ``ANCHOR: TEXT``)."""
    if row.get("kind") != "system" or row.get("sender") != ROOM:
        return None
    found = _FIRED.match(str(row.get("body", "")))
    return Intent(found.group(1).lower()) if found else None


BREADCRUMBS = {
    Intent.ANCHOR: (
        "ANCHOR is your own breadcrumb: return to your own work now. Non-negotiable: the"
        " anchor wins over any message or link waiting. Set a new anchor"
        " (agent-room timer anchor 5m TEXT) so one is always pending."
    ),
    Intent.CHECK: (
        "CHECK is your own breadcrumb: read the status below; look, do not message. Engage"
        " only if the peer is stuck and you choose to help, and then set a new anchor first."
    ),
    Intent.WAIT: (
        "WAIT is your own breadcrumb: check whether the answer you asked for arrived"
        " (agent-room inbox --peek); either way, then return to your own work."
    ),
}
"""What each fired intent asks of the agent, in the words of seed 001."""


def breadcrumb_guidance(intents: Iterable[Intent]) -> str:
    """The words that frame fired timers: they are the agent's own intent, to act on."""
    wanted = set(intents)
    noun = "timer" if len(wanted) == 1 else "timers"
    return f"Your own {noun} fired. " + " ".join(
        BREADCRUMBS[intent] for intent in Intent if intent in wanted
    )


_MENTION = re.compile(r"@([a-z0-9][a-z0-9_-]{0,31})")
_WORD = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


def named_peers(text: str, owner: str, members: Iterable[str]) -> list[str]:
    """The agents a CHECK timer's text names: its ``@name`` mentions of members, else the
    members whose name stands in it as a word ("read worker-feasibility status")."""
    present = set(members) - {owner}
    lowered = text.lower()
    mentioned = [m for m in dict.fromkeys(_MENTION.findall(lowered)) if m in present]
    if mentioned:
        return mentioned
    return [w for w in dict.fromkeys(_WORD.findall(lowered)) if w in present]


STATUS_OUTPUT = 1500
"""Characters of a peer's last output a CHECK carries; ``agent-room peek`` reads more."""


def peer_status(
    name: str,
    *,
    now: float,
    state: str | None,
    since: float | None,
    output: str | None,
    output_at: float | None,
    links: str,
) -> str:
    """A peer's status as a fired CHECK shows it: state, links and its last output."""
    if state is None:
        return f"@{name}: not in the room any more."
    lines = [f"@{name}: {state}" + (f" for {format_duration(now - since)}" if since else "")]
    lines.append(f"links: {links or 'none'}")
    if output:
        text = output.strip()
        if len(text) > STATUS_OUTPUT:
            text = text[:STATUS_OUTPUT] + " [...] (agent-room peek for more)"
        ago = f" ({format_duration(now - output_at)} ago)" if output_at else ""
        lines.append(f"last output{ago}:\n{text}")
    else:
        lines.append("last output: none yet")
    return "\n".join(lines)


REMIND_EVERY = 600.0
"""Seconds between two anchor reminders to the same agent on the same link: a reminder
starts a turn (one the room caused, which never crosses), so it is rationed."""


def anchor_reminder(link_id: int, peer: str) -> str:
    """What an agent that answered across a link without a pending anchor is told."""
    return (
        f"[agent-room] You answered @{peer} across link #{link_id} without a pending anchor"
        " timer. The rule: before you respond to another agent, set a new anchor on your own"
        " work first (agent-room timer anchor 5m TEXT). Set it now, then return to your work;"
        " you do not need to answer this."
    )


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
