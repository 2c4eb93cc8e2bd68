"""Resume checkpoints (seed 002): what a session had done, and how much of it a resume gets.

A checkpoint marks a point in a session's memory (its transcript items up to one, the
room's messages up to one), so taking it costs one small row; the context is built when
someone resumes from it. Three modes, as the seed's: ``full`` (everything, newest kept
if it is over ``FULL_BUDGET``), ``partial`` (the last ``PARTIAL_LIMIT`` entries) and
``agent`` (only what involved one other agent: the messages and handovers between them,
and transcript items that name it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agent_room.core.memory import Kind, estimate_tokens
from agent_room.core.transcript import one_line
from agent_room.turn.core.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

MODES = ("full", "partial", "agent")
PARTIAL_LIMIT = 50
"""Entries a partial resume keeps (seed 002's ``partialResumeLimit``)."""
FULL_BUDGET = 40_000
"""Tokens a full resume may take; older entries are left out beyond it."""
KEEP_PER_SESSION = 10
"""Checkpoints kept per session (seed 002's ``maxCheckpointsPerSession``)."""
KEEP_DAYS = 30
"""Days a checkpoint is kept (seed 002's ``checkpointRetention``)."""

MANUAL = "manual"
SESSION_END = "session_end"
PRE_COMPACT = "pre_compact"

_LABELS = {
    Kind.PROMPT: "asked",
    Kind.SAID: "said",
    Kind.READ: "read",
    Kind.CHANGED: "changed",
    Kind.COMMAND: "ran",
    Kind.DECISION: "decided",
    Kind.OPEN: "open",
}


def check_mode(mode: str, agent: str | None) -> str:
    """The mode if valid (``agent`` needs the agent's name), else ``BadInput``."""
    if mode not in MODES:
        raise BadInput(f"invalid mode {mode!r}: use full, partial or agent")
    if mode == "agent" and not agent:
        raise BadInput("--mode agent needs --agent NAME: whose part to resume")
    return mode


@dataclass(frozen=True, slots=True)
class ResumeEntry:
    """One line of a resume context, with when it happened and whom it involved."""

    at: float
    text: str
    involves: frozenset[str] = frozenset()


def epoch(text: str | None) -> float | None:
    """Seconds since the epoch of a transcript's ISO time, if it is one."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def entries(
    name: str, items: Iterable[Mapping[str, Any]], messages: Iterable[Mapping[str, Any]]
) -> list[ResumeEntry]:
    """Transcript items and messages as one timeline, oldest first.

    An item without a time of its own takes the time of the one before it.
    """
    timeline: list[ResumeEntry] = []
    last = 0.0
    for item in items:
        last = epoch(item.get("at")) or last
        label = _LABELS.get(str(item["kind"]), str(item["kind"]))
        text = str(item["text"])
        named = frozenset(re.findall(r"@([a-z0-9][a-z0-9_-]{0,31})", text))
        timeline.append(ResumeEntry(last, f"- {label}: {text}", named))
    for message in messages:
        other = message["recipient"] if message["sender"] == name else message["sender"]
        kind = "handover" if message["kind"] == "handover" else "message"
        arrow = f"to @{message['recipient']}" if message["sender"] == name else f"from @{other}"
        body = one_line(str(message["body"]), 400)
        state = f" ({message['state']})" if message.get("state") else ""
        timeline.append(
            ResumeEntry(
                float(message["created_at"]),
                f"- {kind} {arrow}{state}: {body}",
                frozenset({str(other)}),
            )
        )
    timeline.sort(key=lambda e: e.at)
    return timeline


def select(timeline: Sequence[ResumeEntry], mode: str, agent: str | None) -> list[ResumeEntry]:
    """The entries a resume in ``mode`` gets, oldest first."""
    if mode == "partial":
        return list(timeline[-PARTIAL_LIMIT:])
    if mode == "agent":
        return [e for e in timeline if agent in e.involves]
    kept: list[ResumeEntry] = []
    spent = 0
    for entry in reversed(timeline):
        spent += estimate_tokens(entry.text + "\n")
        if spent > FULL_BUDGET:
            break
        kept.append(entry)
    kept.reverse()
    return kept


def render(
    checkpoint: Mapping[str, Any],
    chosen: Sequence[ResumeEntry],
    total: int,
    mode: str,
    *,
    entities: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The resume context: where it comes from, then the entries."""
    when = datetime.fromtimestamp(float(checkpoint["created_at"])).strftime("%Y-%m-%d %H:%M")
    lines = [
        f"## Resuming @{checkpoint['name']} from checkpoint #{checkpoint['id']}"
        f" ({checkpoint['kind']}, {when})",
    ]
    if checkpoint.get("note"):
        lines.append(f"Note: {checkpoint['note']}")
    lines.append(f"{len(chosen)} of {total} entries ({mode}).")
    lines.append("")
    lines += [entry.text for entry in chosen] or ["(nothing was recorded before it)"]
    if entities:
        lines += ["", "Entities it named:"]
        for entity in entities:
            context = f": {one_line(str(entity['context']), 120)}" if entity["context"] else ""
            lines.append(f"- {entity['type']} {entity['name']}{context}")
    return "\n".join(lines) + "\n"


def expired(
    checkpoints: Sequence[Mapping[str, Any]],
    now: float,
    *,
    keep: int = KEEP_PER_SESSION,
    days: float = KEEP_DAYS,
) -> list[int]:
    """Ids of one session's checkpoints (newest first) beyond the count or the age kept."""
    gone = [int(c["id"]) for c in checkpoints[keep:]]
    gone += [
        int(c["id"]) for c in checkpoints[:keep] if now - float(c["created_at"]) > days * 86400
    ]
    return gone
