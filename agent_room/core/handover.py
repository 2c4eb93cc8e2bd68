"""Handovers: the template of seed 004 and the state machine of seed 002.

Standard library only. A handover is a message the operator must approve before the
recipient sees it: ``pending -> approved | rejected | expired``; nothing else moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.core.enums import HandoverState
from agent_room.turn.core.errors import BadInput, Refused
from agent_room.turn.core.records import Record

if TYPE_CHECKING:
    from typing import Any, ClassVar

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


class HandoverFields(Record):
    """The sections of seed 004's handover template, as the sender wrote them."""

    __slots__ = ("breaking", "contract", "files", "notes", "what_changed", "what_to_do")
    DEFAULTS: ClassVar[dict[str, Any]] = dict.fromkeys(
        ("breaking", "contract", "files", "notes"), ""
    )

    what_changed: str
    what_to_do: str
    files: str
    contract: str
    breaking: str
    notes: str

    def check(self) -> HandoverFields:
        """Return the fields if the template's required sections are given, else raise."""
        if not self.what_changed.strip():
            raise BadInput("a handover needs --changed: what changed")
        if not self.what_to_do.strip():
            raise BadInput("a handover needs --todo: what the recipient needs to do")
        return self

    def as_dict(self) -> dict[str, str]:
        """The fields by name, for storage next to the message."""
        return {
            "what_changed": self.what_changed,
            "what_to_do": self.what_to_do,
            "files": self.files,
            "contract": self.contract,
            "breaking": self.breaking,
            "notes": self.notes,
        }


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
