"""The ledger's pure rules: outcome names and the statistics' arithmetic."""

from __future__ import annotations

from agent_room.core.ledger import Collaboration, outcome, stats


def _item(i: int, sender: str, recipient: str, state: str, **times: float) -> Collaboration:
    return Collaboration(
        id=i,
        sender=sender,
        recipient=recipient,
        outcome=outcome(state, times.get("applied_at")),
        requested_at=0.0,
        decided_at=times.get("decided_at"),
        applied_at=times.get("applied_at"),
    )


def test_outcome_is_applied_only_for_an_approved_handover_that_took() -> None:
    assert outcome("approved", 5.0) == "applied"
    assert outcome("approved", None) == "approved"
    assert outcome("rejected", 5.0) == "rejected"


def test_medians_and_rate() -> None:
    items = [
        _item(1, "a", "b", "approved", decided_at=10.0, applied_at=30.0),
        _item(2, "a", "b", "approved", decided_at=20.0, applied_at=50.0),
        _item(3, "a", "b", "approved", decided_at=60.0),
        _item(4, "a", "b", "expired", decided_at=100.0),
        _item(5, "a", "a", "pending"),
    ]
    summary = stats(items)
    pair = summary["pairs"]["a -> b"]
    assert pair["applied"] == 2
    assert pair["approved"] == 1
    assert pair["expired"] == 1
    assert pair["approval_rate"] == 0.75
    assert pair["median_to_decision"] == 40.0
    assert pair["median_to_applied"] == 40.0
    assert summary["agents"]["a"]["total"] == 5  # a self-handover counts once
