"""Crossing rules: which turns of a linked session are over, and what each one does.

Pure. A turn's final output crosses to the peer only when the turn answered a peer
(``core.origins``): never the room's own housekeeping (a checkpoint prompt, the room's
notices, reminders or timers) nor a person's turn, nor an answer to another link, nor
empty output or only an acknowledgement; then the link's limits apply: the budget set
when it opened, and the loop breaker that freezes a link exchanging too fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from agent_room.core.links import LinkState, is_ack
from agent_room.turn.core.origins import ANSWERS, ROOM_MADE, Origin, classify_prompt
from agent_room.turn.core.prompts import PromptKind


class Outcome(StrEnum):
    """What became of one turn on one link."""

    CROSSED = "crossed"
    HELD = "held"
    """The link was frozen: the output waits, as a held message, for a thaw."""
    CHECKPOINT = "checkpoint"
    """Started by a checkpoint prompt: internal housekeeping never crosses."""
    ROOM = "room"
    """Started by the room's own messages only (timers, link notices): housekeeping."""
    ELSEWHERE = "elsewhere"
    """An answer to input from another link: it crosses there, not here."""
    EMPTY = "empty"
    ACK = "ack"
    """Only acknowledges ("ok", "thanks", "got it"): nothing new for the peer."""
    FAILED = "failed"
    """The turn ended in an error."""
    CLOSED = "closed"
    """The link closed before the output could cross (budget spent, severed)."""
    EARLIER = "earlier"
    """Continues a turn begun before the link opened, and answers nothing of this link."""
    PERSON = "person"
    """Started by a person (typed, or the operator's message): it answers no peer."""


class TurnGroup(NamedTuple):
    """One turn as the peer sees it: a prompt and the final output of its last Stop.

    A Stop hook that blocks (messages handed over at the turn boundary) makes the agent
    continue, and the continuation is recorded as a turn row of its own (kind
    ``unknown``); it belongs to the turn it continues, and only the last output is final.
    """

    head: int
    """The id of the turn row that started it."""
    last: int
    """The id of its last row: the one with the final output."""
    kind: str
    prompt: str
    output: str | None
    failed: bool
    continued: tuple[float, float] | None = None
    """For a turn its Stop hook continued: from its first Stop to its last. Messages
    handed over in between (at the turn boundary) are input this turn answered."""
    orphan: bool = False
    """It continues a turn begun before the rows at hand (before the link opened, or
    already judged): only what was handed over at that turn's boundary tells about it."""


CONTINUATION = "unknown"
"""The kind the store gives a Stop with no open turn: a continuation after a block."""


def group_turns(
    turns: Sequence[dict[str, Any]], *, busy: bool, before: dict[str, Any] | None = None
) -> list[TurnGroup]:
    """The finished turns among ``turns`` (rows oldest first, after the last judged one).

    A turn is finished when a later turn started, or when its last row stopped and the
    session is no longer busy (a blocked Stop keeps it busy until the continuation
    stops). Rows still running are left for the next pass. ``before`` is the row just
    before ``turns``: a continuation at the start belongs to its turn.
    """
    groups: list[list[dict[str, Any]]] = []
    for row in turns:
        if groups and row["kind"] == CONTINUATION:
            groups[-1].append(row)
        else:
            groups.append([row])
    done = []
    for index, rows in enumerate(groups):
        last = rows[-1]
        later = index + 1 < len(groups)
        if not later and (busy or last["stopped_at"] is None):
            break
        if last["stopped_at"] is None:
            continue  # a turn that never stopped (interrupted): nothing to say
        head = rows[0]
        orphan = index == 0 and head["kind"] == CONTINUATION
        start = before if orphan else head
        window = None
        if (orphan or len(rows) > 1) and start is not None and start["stopped_at"] is not None:
            window = (float(start["stopped_at"]), float(last["stopped_at"]))
        done.append(
            TurnGroup(
                head=int(head["id"]),
                last=int(last["id"]),
                kind=str(head["kind"]),
                prompt=str(head["prompt"] or ""),
                output=last["output"],
                failed=bool(last["failed"]),
                continued=window,
                orphan=orphan,
            )
        )
    return done


class Started(NamedTuple):
    """What the room's messages tell about a turn started by a nudge."""

    room_only: bool = False
    """Every message it delivered was the room's own (timers, notices)."""
    links: frozenset[int] = frozenset()
    """The links whose input it delivered."""
    other: bool = False
    """It also delivered something that belongs to no link (a chat, a handover)."""
    person: bool = False
    """It delivered a message from the operator."""

    @property
    def answers_peer(self) -> bool:
        """It handed over a message or a crossing from another agent."""
        return bool(self.links) or self.other


def assess(group: TurnGroup, link_id: int, started: Started, patterns: Sequence[str]) -> Outcome:
    """What one finished turn does on one link, before the link's own limits apply.

    Only a turn that answers a peer may cross: its origin (``core.origins``, stored by
    the hook) or the messages it was handed say so. The room's own prompts (timers,
    reminders, notices, checkpoints) and a person's never cross. The checkpoint filter
    also reads the turn's prompt with the room's patterns (the hook knew only the
    defaults), so a room that changes them is obeyed, on every transport.
    """
    if classify_prompt(group.prompt, patterns).kind == PromptKind.CHECKPOINT:
        return Outcome.CHECKPOINT
    if group.orphan and link_id not in started.links:
        return Outcome.EARLIER
    if not started.answers_peer:
        if started.room_only or (group.kind in ROOM_MADE and group.kind != Origin.CHECKPOINT):
            return Outcome.ROOM  # (a checkpoint is the room's patterns' call, just above)
        if started.person or group.kind not in ANSWERS:
            return Outcome.PERSON
    if started.links and not started.other and link_id not in started.links:
        return Outcome.ELSEWHERE
    if group.failed:
        return Outcome.FAILED
    output = group.output or ""
    if not output.strip():
        return Outcome.EMPTY
    if is_ack(output):
        return Outcome.ACK
    return Outcome.CROSSED


class Limit(NamedTuple):
    """What the link's limits make of an output that would cross."""

    outcome: Outcome
    freeze: bool = False
    """The loop breaker trips now: freeze the link (this output is held)."""
    close: bool = False
    """This crossing spends the budget: close the link after it."""


def apply_limits(
    state: LinkState,
    *,
    crossings: int,
    budget: int,
    recent: Sequence[float],
    now: float,
    loop_max: int,
    loop_window: float,
) -> Limit:
    """Budget and loop breaker for an output that would cross now.

    ``recent`` are the times of the link's crossings; more than ``loop_max`` of them
    within ``loop_window`` seconds freezes the link and holds the output. The crossing
    that reaches the budget is delivered, then the link closes.
    """
    if state is LinkState.CLOSED or crossings >= budget:
        return Limit(Outcome.CLOSED, close=state is not LinkState.CLOSED)
    if state is LinkState.FROZEN:
        return Limit(Outcome.HELD)
    if loop_max > 0 and in_window(recent, now, loop_window) >= loop_max:
        return Limit(Outcome.HELD, freeze=True)
    return Limit(Outcome.CROSSED, close=crossings + 1 >= budget)


@dataclass(frozen=True)
class JudgedTurn:
    """One turn (a group of turns: ``head`` to ``last``) of a linked session, judged."""

    link_id: int
    session_id: str
    head: int
    last: int
    outcome: str
    """``assess``'s outcome; for output that would cross, the verdict replaces it."""
    at: float


@dataclass(frozen=True)
class CrossingOutput:
    """Output that would cross a link: from the speaker to its peer, framed."""

    sender: str
    recipient: str
    body: str
    loop_hold: tuple[int, str] | None = None
    """The turn breaker's hold on the speaker (id, why), if one holds it."""


@dataclass(frozen=True)
class CrossingNotices:
    """What the room tells whom (name, text) when a crossing freezes or closes the link,
    and the speaker's anchor reminder."""

    freeze: Sequence[tuple[str, str]]
    close: Sequence[tuple[str, str]]
    unanchored: str
    closed: Sequence[tuple[str, str]] = ()
    """When output meets a link already spent (nothing crossed)."""


@dataclass(frozen=True)
class LinkFacts:
    """What the room holds of a link when a turn's output would cross it (read in the
    transaction that writes the verdict)."""

    state: LinkState
    crossings: int
    budget: int
    recent: tuple[float, ...]
    """Times of the link's crossings within the loop window."""
    anchored: bool
    """The speaker has a pending anchor timer."""
    reminded: bool
    """The speaker was reminded to set one on this link within ``REMIND_EVERY``."""


@dataclass(frozen=True)
class Verdict:
    """What happens to an output that would cross a link."""

    outcome: Outcome
    freeze: bool = False
    """The loop breaker trips now: freeze the link (the output is held)."""
    close: bool = False
    """This crossing spends the budget (or the link was spent): close it."""
    breaker_held: bool = False
    """The turn breaker holds the speaker: the output waits in its hold."""
    remind: bool = False
    """The answer crossed without a pending anchor timer: remind the speaker (the rule:
    set a new anchor before responding), at most once per ``REMIND_EVERY`` on the link,
    since a reminder starts a turn of its own."""


def judge(
    facts: LinkFacts, *, now: float, loop_max: int, loop_window: float, breaker_holds: bool
) -> Verdict:
    """The verdict on an output that would cross: the link's budget and loop breaker
    (``apply_limits``), then the turn breaker (which holds what would have crossed),
    then the anchor reminder."""
    limit = apply_limits(
        facts.state,
        crossings=facts.crossings,
        budget=facts.budget,
        recent=facts.recent,
        now=now,
        loop_max=loop_max,
        loop_window=loop_window,
    )
    if breaker_holds and limit.outcome is Outcome.CROSSED:
        return Verdict(Outcome.HELD, freeze=limit.freeze, breaker_held=True)
    crossed = limit.outcome is Outcome.CROSSED
    return Verdict(
        limit.outcome,
        freeze=limit.freeze,
        close=limit.close,
        remind=crossed and not facts.anchored and not facts.reminded,
    )


def in_window(times: Sequence[float], now: float, window: float) -> int:
    """How many of ``times`` fall within the last ``window`` seconds."""
    return sum(1 for t in times if now - window < t <= now)
