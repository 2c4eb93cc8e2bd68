"""The collaboration ledger: every handover as one collaboration, and what became of it.

Seed 002 counts a handover as a collaboration that moves ``pending -> approved |
rejected | expired -> applied``; *applied* means the recipient received it and the turn
in which it did so ended, the first moment the work can be said to have changed hands.
Pure: the store supplies the rows with their times, this module names the outcome and
sums them up per pair and per agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import median
from typing import Any

APPLIED = "applied"
OUTCOMES = ("pending", "approved", "rejected", "expired", APPLIED)
"""Every outcome a collaboration can have, in the order the statistics print them."""


def outcome(state: str, applied_at: float | None) -> str:
    """The collaboration's outcome: the handover's state, or ``applied`` once it took."""
    return APPLIED if state == "approved" and applied_at is not None else state


@dataclass(frozen=True, slots=True)
class Collaboration:
    """One handover as the ledger shows it."""

    id: int
    sender: str
    recipient: str
    outcome: str
    requested_at: float
    decided_at: float | None = None
    received_at: float | None = None
    applied_at: float | None = None
    decided_by: str | None = None
    reason: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Collaboration:
        """Built from a store row (``store.ledger.collaborations``)."""
        return cls(
            id=int(row["id"]),
            sender=str(row["sender"]),
            recipient=str(row["recipient"]),
            outcome=outcome(str(row["state"]), row["applied_at"]),
            requested_at=float(row["requested_at"]),
            decided_at=row["decided_at"],
            received_at=row["received_at"],
            applied_at=row["applied_at"],
            decided_by=row["decided_by"],
            reason=row["reason"],
        )

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``ledger --json``."""
        return {
            "id": self.id,
            "sender": self.sender,
            "recipient": self.recipient,
            "outcome": self.outcome,
            "requested_at": self.requested_at,
            "decided_at": self.decided_at,
            "received_at": self.received_at,
            "applied_at": self.applied_at,
            "decided_by": self.decided_by,
            "reason": self.reason,
        }


@dataclass(slots=True)
class Tally:
    """Counts by outcome and the times to a decision and to applied, for one group."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    to_decision: list[float] = field(default_factory=list)
    to_applied: list[float] = field(default_factory=list)

    def add(self, item: Collaboration) -> None:
        """Count one collaboration."""
        self.counts[item.outcome] += 1
        if item.decided_at is not None:
            self.to_decision.append(item.decided_at - item.requested_at)
        if item.applied_at is not None:
            self.to_applied.append(item.applied_at - item.requested_at)

    @property
    def total(self) -> int:
        """How many collaborations were counted."""
        return sum(self.counts.values())

    @property
    def approval_rate(self) -> float | None:
        """Approved (applied or not) over decided; None while nothing was decided."""
        approved = self.counts["approved"] + self.counts[APPLIED]
        decided = approved + self.counts["rejected"] + self.counts["expired"]
        return approved / decided if decided else None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of one row of ``ledger --stats --json``."""
        return {
            "total": self.total,
            **self.counts,
            "approval_rate": self.approval_rate,
            "median_to_decision": median(self.to_decision) if self.to_decision else None,
            "median_to_applied": median(self.to_applied) if self.to_applied else None,
        }


def stats(items: Iterable[Collaboration]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per pair (``a -> b``) and per agent (as sender or recipient), the tallies.

    An agent's tally counts each collaboration it took part in once, whichever side
    it was on.
    """
    pairs: dict[str, Tally] = {}
    agents: dict[str, Tally] = {}
    for item in items:
        pairs.setdefault(f"{item.sender} -> {item.recipient}", Tally()).add(item)
        for name in {item.sender, item.recipient}:
            agents.setdefault(name, Tally()).add(item)
    return {
        "pairs": {key: pairs[key].as_dict() for key in sorted(pairs)},
        "agents": {key: agents[key].as_dict() for key in sorted(agents)},
    }
