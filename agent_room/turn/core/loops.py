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

from agent_room.turn.core.cycles import render_cycle
from agent_room.turn.core.errors import BadInput

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


# -- the turn breaker ---------------------------------------------------------------------

TURNS = "turns"
"""A loop hold's reason when the turn breaker opened it (NULL: messages in a cycle)."""
DEFAULT_TURNS_PER_AGENT = 60
"""Turns the room may cause one agent within the window, whoever's messages they answer:
one every 5 s for five minutes on end. A model turn that does any work takes longer; a
lead hearing back from ten workers three times each in five minutes is prompted 30
times; a burst of messages is handed over in a few nudges. A person's turns are not
counted. The runaway this stops (the room's own prompts feeding each other) caused one
every one or two seconds: it meets the limit within two minutes."""
DEFAULT_TURNS_PER_PAIR = 16
"""Turns two agents may cause each other within the window, both ways alike (twice the
smaller way: a stream of work one way never meets it): each answering the other eight
times in five minutes. That is a link's whole budget; two agents answering each other's
plain messages meet it within a minute or two."""
DEFAULT_TURN_WINDOW = 300.0
"""Seconds over which the turn breaker counts."""
TURNS_AGENT_KEY = "turn_agent_max"
TURNS_PAIR_KEY = "turn_pair_max"
TURN_WINDOW_KEY = "turn_window"
"""The room settings that hold them (``agent-room loops settings --turns``)."""


def turn_settings_from(raw: Mapping[str, Any]) -> tuple[int, int, float]:
    """(per agent, per pair, window) from stored values; defaults for missing or unusable
    ones. A limit of 0 switches that count off."""
    agent, pair, window = (
        raw.get(TURNS_AGENT_KEY),
        raw.get(TURNS_PAIR_KEY),
        raw.get(TURN_WINDOW_KEY),
    )
    return (
        agent if isinstance(agent, int) and agent >= 0 else DEFAULT_TURNS_PER_AGENT,
        pair if isinstance(pair, int) and pair >= 0 else DEFAULT_TURNS_PER_PAIR,
        float(window) if isinstance(window, int | float) and window > 0 else DEFAULT_TURN_WINDOW,
    )


def describe_turns(agent: int, pair: int, window: float) -> str:
    """The turn breaker's setting as ``agent-room loops settings`` shows it."""
    if not agent and not pair:
        return "off"
    parts = [f"{agent} per agent" if agent else "", f"{pair} per pair" if pair else ""]
    return f"{' and '.join(p for p in parts if p)} within {window:g}s (turns the room caused)"


def turn_trip(
    name: str,
    own: int,
    pairs: Mapping[str, tuple[int, int]],
    *,
    agent_max: int,
    pair_max: int,
) -> tuple[str, ...] | None:
    """The hold the turn breaker opens before the room prompts ``name`` once more: its
    path (``(name,)`` for the agent, ``(peer, name, peer)`` for a pair), or None.

    ``own`` counts the turns the room caused ``name`` within the window; ``pairs`` gives
    for each peer the turns of ``name`` it caused and those of the peer ``name`` caused.
    The prompt about to start would be one more of ``name``'s. A pair counts both ways
    alike: twice the smaller way, so a stream of work one way never meets it, and two
    agents answering each other do.
    """
    if agent_max and own + 1 > agent_max:
        return (name,)
    for peer, (mine, theirs) in sorted(pairs.items()):
        if pair_max and 2 * min(mine + 1, theirs) > pair_max:
            return (peer, name, peer)
    return None


def exchanged(mine: int, theirs: int) -> int:
    """The turns a pair caused each other, as the turn breaker counts them."""
    return 2 * min(mine, theirs)


def parse_turns(text: str) -> tuple[int, int, float]:
    """``AGENT/PAIR/SECONDS`` (e.g. ``60/16/300``) or ``off`` for the turn breaker."""
    if text.strip().lower() == "off":
        return 0, 0, DEFAULT_TURN_WINDOW
    parts = text.strip().removesuffix("s").split("/")
    try:
        agent, pair, window = int(parts[0]), int(parts[1]), float(parts[2])
    except (ValueError, IndexError):
        agent = pair = -1
        window = 0.0
    if len(parts) != 3 or agent < 0 or pair < 0 or not window > 0:
        raise BadInput(
            f"invalid turn breaker {text!r}: use AGENT/PAIR/SECONDS such as 60/16/300, or off"
        )
    return agent, pair, window


def is_turn_path(path: Sequence[str]) -> bool:
    """Whether a hold's path is the turn breaker's one agent (a cycle has three names)."""
    return len(path) == 1


def turns_reason(hold_id: int, path: Sequence[str], limit: int, window: float) -> str:
    """Why the room stopped prompting, as ``who``, ``loops`` and the operator read it
    (``limit``: the count of the breaker's setting that was passed)."""
    who = f"@{path[0]}" if is_turn_path(path) else f"@{path[0]} and @{path[1]}"
    return (
        f"held by the turn breaker: loop #{hold_id}, the room caused {who} more than"
        f" {limit} turns within {window:g}s; the operator releases it with"
        f" agent-room loops release {hold_id}"
    )
