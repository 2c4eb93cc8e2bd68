"""Handovers: the template of seed 004 and the state machine of seed 002.

A handover is a message the operator must approve before the
recipient sees it: ``pending -> approved | rejected | expired``; nothing else moves.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from agent_room.core.enums import HandoverState
from agent_room.turn.core.errors import BadInput, Refused

TRANSITIONS: dict[HandoverState, frozenset[HandoverState]] = {
    HandoverState.PENDING: frozenset(
        {HandoverState.APPROVED, HandoverState.REJECTED, HandoverState.EXPIRED}
    ),
    HandoverState.APPROVED: frozenset(),
    HandoverState.REJECTED: frozenset(),
    HandoverState.EXPIRED: frozenset(),
}
"""Every allowed move; a decided handover is final."""

DEFAULT_HANDOVER_TTL = 24 * 3600.0
"""A handover nobody decided on within a day expires and its sender is told."""


def check_transition(handover_id: int, current: HandoverState, target: HandoverState) -> None:
    """Raise ``Refused`` unless ``current -> target`` is an allowed move."""
    if target not in TRANSITIONS[current]:
        raise Refused(f"handover #{handover_id} is {current.value}; it cannot become {target}")


@dataclass(frozen=True, slots=True, kw_only=True)
class HandoverFields:
    """The sections of seed 004's handover template, as the sender wrote them."""

    what_changed: str
    what_to_do: str
    files: str = ""
    contract: str = ""
    breaking: str = ""
    notes: str = ""

    def check(self) -> HandoverFields:
        """Return the fields if the template's required sections are given, else raise."""
        if not self.what_changed.strip():
            raise BadInput("a handover needs --changed: what changed")
        if not self.what_to_do.strip():
            raise BadInput("a handover needs --todo: what the recipient needs to do")
        return self

    def as_dict(self) -> dict[str, str]:
        """The fields by name, for storage next to the message."""
        return asdict(self)


def _bullets(text: str, empty: str) -> str:
    lines = [line.strip() for line in text.replace(";", "\n").splitlines() if line.strip()]
    if not lines:
        return f"- {empty}"
    return "\n".join(line if line.startswith(("-", "*")) else f"- {line}" for line in lines)


def render_handover(sender: str, fields: HandoverFields) -> str:
    """Render the handover as the Markdown body of seed 004's message format."""
    parts = [
        f"## Handover from {sender}",
        "",
        "**What changed:**",
        _bullets(fields.what_changed, "(not given)"),
        "",
        "**Files affected:**",
        _bullets(fields.files, "(none listed)"),
        "",
        "**What you need to do:**",
        _bullets(fields.what_to_do, "(not given)"),
        "",
        "**Schema/Contract details (if applicable):**",
        _bullets(fields.contract, "(none)"),
        "",
        "**Breaking changes:**",
        _bullets(fields.breaking, "none"),
    ]
    if fields.notes.strip():
        parts += ["", "**Notes:**", fields.notes.strip()]
    return "\n".join(parts) + "\n"
