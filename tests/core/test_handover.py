"""The handover state machine and template."""

from __future__ import annotations

import itertools

import pytest

from agent_room.core.enums import HandoverState
from agent_room.core.handover import HandoverFields, check_transition, render_handover
from agent_room.core.models import Handover
from agent_room.turn.core.errors import BadInput, Refused

ALLOWED = {
    (HandoverState.PENDING, HandoverState.APPROVED),
    (HandoverState.PENDING, HandoverState.REJECTED),
    (HandoverState.PENDING, HandoverState.EXPIRED),
}


@pytest.mark.parametrize(("current", "target"), itertools.product(HandoverState, repeat=2))
def test_only_pending_moves_and_only_forward(current: HandoverState, target: HandoverState) -> None:
    if (current, target) in ALLOWED:
        check_transition(7, current, target)
    else:
        with pytest.raises(Refused, match="#7"):
            check_transition(7, current, target)


def test_model_decide_returns_a_new_value() -> None:
    pending = Handover(message_id=3, state=HandoverState.PENDING, requested_at=1.0)
    rejected = pending.decide(HandoverState.REJECTED, at=2.0, by="operator", reason="later")
    assert pending.state is HandoverState.PENDING
    assert (rejected.state, rejected.reason, rejected.decided_at) == ("rejected", "later", 2.0)
    with pytest.raises(Refused):
        rejected.decide(HandoverState.APPROVED, at=3.0, by="operator")


def test_template_has_every_section_of_seed_004() -> None:
    body = render_handover(
        "backend",
        HandoverFields(
            what_changed="GET /tasks added; PATCH /tasks/:id",
            what_to_do="list view",
            files="api/tasks.py",
            contract="{ id: string }",
            breaking="none",
        ),
    )
    for heading in (
        "## Handover from backend",
        "**What changed:**",
        "**Files affected:**",
        "**What you need to do:**",
        "**Schema/Contract details (if applicable):**",
        "**Breaking changes:**",
    ):
        assert heading in body
    assert "- GET /tasks added\n- PATCH /tasks/:id" in body


@pytest.mark.parametrize(
    ("changed", "todo", "flag"), [("", "x", "--changed"), ("x", " ", "--todo")]
)
def test_template_needs_what_changed_and_what_to_do(changed: str, todo: str, flag: str) -> None:
    with pytest.raises(BadInput, match=flag):
        HandoverFields(what_changed=changed, what_to_do=todo).check()
