"""The fleet-wide loop breaker: agents messaging each other in circles, held for the operator.

Pure, and light enough for ``agent-room send``'s fast path (no typing, enum or json). Two
agents answering each other's messages can ping-pong without end, and so can three or
more passing work around (A -> B -> C -> A), over plain messages, handovers and link
crossings alike. Each link has its own breaker (``core.links``); this one watches the
whole room. A message closes a loop when, counting it, every step of a cycle through its
sender and recipient carried at least ``per_edge`` messages within ``window`` seconds.
Such a message is held (stored, never delivered), and so is every later message along
that cycle, until the operator releases the hold (``agent-room loops release ID``) or
drops what it holds. After a release the loop's steps count afresh.
"""

from __future__ import annotations

from agent_room.core.cycles import render_cycle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

DEFAULT_PER_EDGE = 10
"""Messages along every step of a cycle within the window that make it a loop: far above
what agents that think between messages send (a turn takes seconds to minutes), far
below a runaway pair (60 a minute and more)."""
DEFAULT_WINDOW = 60.0
"""Seconds over which the steps of a cycle are counted."""
PER_EDGE_KEY = "fleet_loop_max"
WINDOW_KEY = "fleet_loop_window"
"""The room settings that hold them (``agent-room loops settings``)."""


def settings_from(raw: Mapping[str, Any]) -> tuple[int, float]:
    """(per_edge, window) from stored values; defaults for missing or unusable ones.
    ``per_edge`` 0 switches the loop breaker off."""
    per_edge = raw.get(PER_EDGE_KEY)
    window = raw.get(WINDOW_KEY)
    return (
        per_edge if isinstance(per_edge, int) and per_edge >= 0 else DEFAULT_PER_EDGE,
        float(window) if isinstance(window, int | float) and window > 0 else DEFAULT_WINDOW,
    )


def describe(per_edge: int, window: float) -> str:
    """The setting as ``agent-room loops settings`` shows it."""
    if not per_edge:
        return "off"
    return f"{per_edge}/{window:g}s (messages along every step of a cycle)"


def store_path(cycle: Sequence[str]) -> str:
    """A cycle as stored: its names, space-separated (a name has no spaces)."""
    return " ".join(cycle)


def load_path(text: str) -> tuple[str, ...]:
    """A stored cycle back as names."""
    return tuple(text.split())


def held_reason(hold_id: int, cycle: Sequence[str]) -> str:
    """Why a message is held, as ``history`` and ``inbox`` show it."""
    return (
        f"held by the loop breaker: loop #{hold_id} {render_cycle(cycle)};"
        f" the operator releases it with agent-room loops release {hold_id}"
    )


def sender_notice(message_id: int, hold_id: int, cycle: Sequence[str]) -> str:
    """What ``send`` tells the sender of a held message."""
    return (
        f"message #{message_id} is held, not delivered: it runs in a loop"
        f" {render_cycle(cycle)} (loop #{hold_id}). The operator decides; go back to your"
        " own work."
    )
