"""The rules of bidirectional links: what crosses, in which frame, and when a link ends.

Pure: the injector gathers the facts (a session's recorded turns, who started them, the
link's counters, the recent crossings) and applies the verdicts; every rule lives here
so it can be tested without a database, tmux or a clock.

A link joins two sessions (keyed by their session ids, so a resumed session keeps its
links); the initiator owns it. Each turn of either side is judged once: its final
output crosses to the peer framed ``[From @name] ...`` unless the turn was the room's
own housekeeping (a checkpoint, a timer, a room notice), or the output is empty or only
acknowledges. Crossings are limited by a budget set when the link opens and by a loop
breaker that freezes a link exchanging too fast.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, NamedTuple

from agent_room.turn.core.errors import BadInput, Refused
from agent_room.turn.core.prompts import DEFAULT_CHECKPOINT_PATTERNS
from agent_room.turn.core.timers import format_duration

DEFAULT_BUDGET = 8
"""Crossings a link allows in all; set when it opens and never reset."""
DEFAULT_BUDGET_WINDOW = 3600.0
"""Seconds after a link closes during which the next link between the same two agents
inherits what was left of its budget: reopening never resets the budget."""
DEFAULT_LOOP_MAX = 6
"""The loop breaker: more crossings than this within ``DEFAULT_LOOP_WINDOW`` freeze a link."""
DEFAULT_LOOP_WINDOW = 60.0
"""Seconds over which the loop breaker counts crossings."""
DEFAULT_SEVER_GRACE = 30.0
"""Seconds an ended session has to be resumed before its links are severed."""
MAX_BUDGET = 1000

ANTI_CHATTINESS_RULES = (
    '1. Never acknowledge before contributing. No "Great point!": start with your content.',
    "2. Never repeat or paraphrase what the other said. Move forward.",
    "3. Never ask a follow-up unless you genuinely cannot proceed without the answer.",
    "4. If you have nothing new to add, stop. Silence is valid.",
    "5. Receiving input does not obligate a response. Absorb it and continue working.",
)


class LinkState(StrEnum):
    """Where a link is in its life."""

    OPEN = "open"
    FROZEN = "frozen"
    """The loop breaker or the operator stopped crossings; outputs are held, not lost."""
    CLOSED = "closed"


class Role(StrEnum):
    """A side of a link."""

    INITIATOR = "initiator"
    """Opened the link: owns its lifecycle and the synthesis; the only side that closes it."""
    RESPONDER = "responder"


class LinkSettings(NamedTuple):
    """The room's link settings (``agent-room link settings``)."""

    budget: int = DEFAULT_BUDGET
    loop_max: int = DEFAULT_LOOP_MAX
    """0 switches the loop breaker off."""
    loop_window: float = DEFAULT_LOOP_WINDOW
    checkpoint_patterns: tuple[str, ...] = DEFAULT_CHECKPOINT_PATTERNS
    sever_grace: float = DEFAULT_SEVER_GRACE
    budget_window: float = DEFAULT_BUDGET_WINDOW
    """0: every new link starts with the full budget."""

    @classmethod
    def from_mapping(cls, raw: dict[str, Any]) -> LinkSettings:
        """Settings from stored values, defaults for anything missing or unusable."""
        default = cls()
        patterns = raw.get("checkpoint_patterns")
        return cls(
            budget=_int(raw.get("budget"), default.budget, 1),
            loop_max=_int(raw.get("loop_max"), default.loop_max, 0),
            loop_window=_seconds(raw.get("loop_window"), default.loop_window) or 1.0,
            checkpoint_patterns=tuple(str(p) for p in patterns)
            if isinstance(patterns, list) and patterns
            else default.checkpoint_patterns,
            sever_grace=_seconds(raw.get("sever_grace"), default.sever_grace),
            budget_window=_seconds(raw.get("budget_window"), default.budget_window),
        )


def _seconds(value: Any, default: float) -> float:
    return float(value) if isinstance(value, int | float) and value >= 0 else default


def _int(value: Any, default: int, least: int) -> int:
    return value if isinstance(value, int) and value >= least else default


def check_patterns(patterns: Sequence[str]) -> tuple[str, ...]:
    """Checkpoint patterns as the room accepts them: valid regular expressions."""
    checked = []
    for pattern in patterns:
        if not pattern.strip():
            raise BadInput("a checkpoint pattern cannot be empty")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise BadInput(f"invalid checkpoint pattern {pattern!r}: {exc}") from None
        checked.append(pattern)
    return tuple(checked)


def check_budget(value: int) -> int:
    """A link budget: a positive number of crossings, within reason."""
    if not 1 <= value <= MAX_BUDGET:
        raise BadInput(f"a link budget is 1 to {MAX_BUDGET} crossings, not {value}")
    return value


class Previous(NamedTuple):
    """The latest link between two agents, closed within the budget window."""

    id: int
    budget: int
    crossings: int


def carried_budget(default: int, previous: Previous | None) -> int:
    """The budget of a new link between two agents: what their latest link left, when it
    closed within the window (its own budget was carried the same way, and grants raised
    it), else the room's budget. Reopening therefore never resets it."""
    if previous is None:
        return default
    return max(0, previous.budget - previous.crossings)


def spent_refusal(a: str, b: str, previous: Previous, window: float) -> str:
    """Why a new link between ``a`` and ``b`` is refused, and who can change that."""
    return (
        f"the turn budget between @{a} and @{b} is spent: link #{previous.id} crossed"
        f" {previous.crossings} of {previous.budget} and closed less than"
        f" {format_duration(window)} ago;"
        " reopening does not reset it. Only the operator can grant more:"
        f" agent-room link grant {previous.id} COUNT"
    )


def parse_loop(text: str) -> tuple[int, float]:
    """``N/SECONDS`` (e.g. ``6/60``) or ``off`` for the loop breaker."""
    if text.strip().lower() == "off":
        return 0, DEFAULT_LOOP_WINDOW
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*s?\s*", text)
    if not found or int(found.group(1)) < 1 or float(found.group(2)) <= 0:
        raise BadInput(f"invalid loop breaker {text!r}: use N/SECONDS such as 6/60, or off")
    return int(found.group(1)), float(found.group(2))


# -- framing and acknowledgements -------------------------------------------------------


TRUNCATED = "\n[... truncated by the room]"


def frame(name: str, output: str, *, limit: int | None = None) -> str:
    """The text that crosses: a direct statement from the peer, not a notification.

    With ``limit`` (bytes of UTF-8) a longer output is cut, and says so.
    """
    text = f"[From @{name}] {output.strip()}"
    if limit is None or len(text.encode()) <= limit:
        return text
    room = max(0, limit - len(TRUNCATED.encode()))
    cut = text.encode()[:room].decode("utf-8", errors="ignore")
    return cut + TRUNCATED


ACK_PHRASES = frozenset(
    {
        "ok",
        "okay",
        "k",
        "kk",
        "thanks",
        "thank you",
        "thanks a lot",
        "thank you very much",
        "many thanks",
        "thx",
        "ty",
        "got it",
        "noted",
        "understood",
        "ack",
        "acknowledged",
        "roger",
        "roger that",
        "sure",
        "cool",
        "great",
        "perfect",
        "nice",
        "yes",
        "yep",
        "agreed",
        "sounds good",
        "will do",
        "alright",
        "all right",
        "fine",
        "good",
        "received",
        "copy",
        "copy that",
        "makes sense",
        "i see",
        "absorbed",
        "nothing to add",
        "nothing new to add",
        "nothing new",
        "great point",
        "good point",
    }
)
"""Phrases an acknowledgement is made of; output of these alone says nothing new."""
ACK_MAX_WORDS = 10
_LONGEST_PHRASE = max(len(p.split()) for p in ACK_PHRASES)


def is_ack(output: str) -> bool:
    """True for output that only acknowledges: "ok", "Thanks!", "got it 👍", "Noted."."""
    if not output.strip():
        return False
    words: list[str] = []
    for raw in output.lower().split():
        kept = "".join(ch for ch in raw if ch.isalnum() or ch == "'")
        if any(not (ch.isalnum() or ch == "'" or _is_decoration(ch)) for ch in raw):
            return False  # code, paths, numbers with units: content
        if kept:
            words.append(kept.replace("'", ""))
    return len(words) <= ACK_MAX_WORDS and _segments(words)


def _segments(words: list[str]) -> bool:
    """Whether ``words`` split into acknowledgement phrases ("ok thanks" = ok + thanks)."""
    reachable = [True] + [False] * len(words)
    for end in range(1, len(words) + 1):
        for size in range(1, min(end, _LONGEST_PHRASE) + 1):
            if reachable[end - size] and " ".join(words[end - size : end]) in ACK_PHRASES:
                reachable[end] = True
                break
    return reachable[-1]


def _is_decoration(ch: str) -> bool:
    """Punctuation and emoji (👍 🙏 ✅) may decorate an acknowledgement; code may not."""
    if ch in ".,!;:-~()":
        return True
    category = unicodedata.category(ch)
    return category in ("So", "Sk", "Mn", "Cf") or ch == "\ufe0f"


# -- roles and lifecycle ----------------------------------------------------------------


def role_of(session_id: str, initiator_session: str, responder_session: str) -> Role | None:
    """The side ``session_id`` holds in a link, or None if it is not in it."""
    if session_id == initiator_session:
        return Role.INITIATOR
    if session_id == responder_session:
        return Role.RESPONDER
    return None


def check_close(link_id: int, role: Role | None, initiator: str, *, operator: bool) -> None:
    """Only the initiator (or the operator) severs a link; a responder can go silent."""
    if operator or role is Role.INITIATOR:
        return
    if role is Role.RESPONDER:
        raise Refused(
            f"only the initiator @{initiator} can close link #{link_id};"
            " a responder can go silent instead"
        )
    raise Refused(f"you are not in link #{link_id}")


def check_transition(link_id: int, state: LinkState, target: LinkState) -> None:
    """Freeze only an open link, thaw only a frozen one; a closed link stays closed."""
    if state is LinkState.CLOSED:
        raise Refused(f"link #{link_id} is closed")
    if target is LinkState.FROZEN and state is LinkState.FROZEN:
        raise Refused(f"link #{link_id} is already frozen")
    if target is LinkState.OPEN and state is LinkState.OPEN:
        raise Refused(f"link #{link_id} is not frozen")


class Side(NamedTuple):
    """One side of a link as the registry sees its session."""

    role: Role
    state: str | None
    """The session's state; None when no session of that id is in the room."""
    left: bool
    """The session gave its name up (``agent-room leave``)."""
    ended_at: float | None


def sever_verdict(sides: Sequence[Side], *, now: float, grace: float) -> tuple[str | None, bool]:
    """Why a link is severed now (or None), and whether a side's end may still be undone.

    Leaving the room severs at once. An ended session severs its links once it has stayed
    ended for ``grace`` seconds: a resume keeps the session id, and a session resumed
    within the grace (``claude --resume``, after an exit or a crash) keeps its links.
    """
    for side in sides:
        if side.state is None or side.left:
            return f"the {side.role.value} left the room", False
    pending = False
    for side in sides:
        if side.state == "ended":
            if side.ended_at is None or now - side.ended_at >= grace:
                return f"the {side.role.value}'s session ended", False
            pending = True
    return None, pending


def rules_text(link_id: int, me: str, peer: str, role: Role, budget: int) -> str:
    """The notice both sides receive once, when the link opens."""
    if role is Role.INITIATOR:
        owner = (
            "You opened it: you own it and the synthesis, and only you can close it"
            f" (agent-room send @{peer} TEXT --close-link)."
        )
    else:
        owner = f"@{peer} opened it and owns it; you cannot close it, but you may stay silent."
    return (
        f"[agent-room] Link #{link_id} is open between you (@{me}) and @{peer}. Only the"
        f" final output of each of your turns crosses to @{peer}, framed [From @{me}];"
        f" tool calls and reasoning stay private. {owner} At most {budget} crossings, never"
        " reset (reopening the link does not renew them). Keep an anchor timer on your own"
        " work, and set a new one before you answer (agent-room timer anchor 5m TEXT): an"
        " answer without one is reminded at once."
        "\nRules on a link:\n" + "\n".join(ANTI_CHATTINESS_RULES)
    )


LOW_BUDGET = 2
"""Crossings left at which a link's summary says how many remain."""


def links_summary(links: Sequence[Mapping[str, Any]], *, unanchored: bool) -> str:
    """A session's live links in a few words, for ``who`` and the console.

    ``#3 to @b``, ``#4 from @c frozen``, ``2 left`` once a link's budget runs low, and
    ``no anchor!`` when a linked agent has no anchor timer (the anchoring rule).
    """
    cells = []
    for link in links:
        cell = f"#{link['id']} {'to' if link['role'] == Role.INITIATOR else 'from'} @{link['peer']}"
        if link["state"] == LinkState.FROZEN:
            cell += " frozen"
        left = link.get("crossings_left")
        if left is not None and left <= LOW_BUDGET:
            cell += f" {left} left"
        cells.append(cell)
    if unanchored:
        cells.append("no anchor!")
    return ", ".join(cells)
