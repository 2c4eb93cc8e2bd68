"""The delivery policy (``core.delivery.decide``), rule by rule, without tmux or a store."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.core.delivery import (
    MAX_EXTRA_ENTERS,
    MAX_NUDGES,
    RECEIPT_TIMEOUT,
    RETRY_AFTER,
    Action,
    Decision,
    Failed,
    OpenNudge,
    clear_keys_for,
    decide,
    settle_for,
)

NOW = 1000.0
STATES = ("idle", "busy", "waiting", "ended")


def _decide(
    *,
    state: str = "idle",
    queued: tuple[int, ...] = (),
    open_nudge: OpenNudge | None = None,
    refusal: str | None = None,
    has_pane: bool = True,
    failed: tuple[Failed, ...] = (),
    now: float = NOW,
) -> Decision:
    return decide(
        state=state,
        queued=queued,
        open_nudge=open_nudge,
        refusal=refusal,
        has_pane=has_pane,
        now=now,
        failed=failed,
    )


def _open(ids: tuple[int, ...], *, age: float, enters: int = 0) -> OpenNudge:
    return OpenNudge(message_ids=ids, last_try=NOW - age, enters=enters)


# -- a first nudge ---------------------------------------------------------------------


def test_an_idle_agent_at_its_prompt_is_nudged_about_everything_queued() -> None:
    assert _decide(queued=(3, 4, 5)) == Decision(Action.NUDGE, (3, 4, 5))


def test_nothing_queued_nothing_done() -> None:
    assert _decide(queued=()) == Decision(Action.WAIT)


@pytest.mark.parametrize(
    ("state", "action", "note"),
    [
        ("busy", Action.WAIT, "busy: delivered at the turn boundary"),  # typing would queue
        ("waiting", Action.HOLD, "a permission dialog is open"),  # keys could answer it
        ("ended", Action.HOLD, "the recipient's session has ended"),
    ],
)
def test_no_typing_unless_idle(state: str, action: Action, note: str) -> None:
    assert _decide(state=state, queued=(1,)) == Decision(action, note=note)


def test_an_agent_outside_tmux_is_held_for_its_inbox() -> None:
    decision = _decide(queued=(1,), has_pane=False)
    assert decision == Decision(Action.HOLD, note="not in tmux: read with agent-room inbox")


def test_a_pane_that_refuses_typing_holds_with_the_reason() -> None:
    decision = _decide(queued=(1,), refusal="the pane is at a shell prompt")
    assert decision == Decision(Action.HOLD, note="the pane is at a shell prompt")


# -- the open nudge: wait for the receipt, Enter again, give up -------------------------


def test_a_receipt_is_awaited_for_the_timeout() -> None:
    nudge = _open((1,), age=RECEIPT_TIMEOUT - 0.01)
    decision = _decide(queued=(1, 2), open_nudge=nudge)
    assert decision == Decision(Action.WAIT, note="waiting for the receipt")


@pytest.mark.parametrize("enters", range(MAX_EXTRA_ENTERS))
def test_no_receipt_in_time_means_enter_again(enters: int) -> None:
    nudge = _open((1, 2), age=RECEIPT_TIMEOUT, enters=enters)
    assert _decide(queued=(1, 2), open_nudge=nudge) == Decision(Action.ENTER, (1, 2))


def test_enter_again_only_into_a_pane_still_safe() -> None:
    nudge = _open((1,), age=RECEIPT_TIMEOUT)
    decision = _decide(queued=(1,), open_nudge=nudge, refusal="the agent is not in the foreground")
    assert decision == Decision(Action.HOLD, note="the agent is not in the foreground")


def test_enter_again_only_with_a_pane() -> None:
    nudge = _open((1,), age=RECEIPT_TIMEOUT)
    decision = _decide(queued=(1,), open_nudge=nudge, has_pane=False)
    assert decision == Decision(Action.HOLD, note="not in tmux: read with agent-room inbox")


def test_enter_again_never_while_busy() -> None:
    nudge = _open((1,), age=RECEIPT_TIMEOUT)
    decision = _decide(state="busy", queued=(1,), open_nudge=nudge)
    assert decision.action is Action.WAIT


def test_a_busy_recipient_is_not_failed_its_stop_hook_delivers() -> None:
    """Busy after the nudge (its own turn): the queued messages go at the turn boundary."""
    nudge = _open((1,), age=RECEIPT_TIMEOUT * 5, enters=MAX_EXTRA_ENTERS)
    decision = _decide(state="busy", queued=(1,), open_nudge=nudge)
    assert decision == Decision(Action.WAIT, note="busy: delivered at the turn boundary")


def test_after_the_extra_enters_the_nudge_fails() -> None:
    nudge = _open((1, 2), age=RECEIPT_TIMEOUT, enters=MAX_EXTRA_ENTERS)
    decision = _decide(queued=(1, 2), open_nudge=nudge)
    assert decision == Decision(
        Action.FAIL, (1, 2), note=f"no receipt after {MAX_EXTRA_ENTERS + 1} tries"
    )


def test_a_receipted_nudge_no_longer_counts() -> None:
    """Its messages were delivered meanwhile: the new ones get a nudge of their own."""
    nudge = _open((1,), age=RECEIPT_TIMEOUT * 10, enters=MAX_EXTRA_ENTERS)
    assert _decide(queued=(7,), open_nudge=nudge) == Decision(Action.NUDGE, (7,))


def test_messages_queued_after_an_open_nudge_wait_for_it() -> None:
    nudge = _open((1,), age=0.0)
    assert _decide(queued=(1, 2), open_nudge=nudge).action is Action.WAIT


# -- failed deliveries come back once the recipient is healthy --------------------------


def _failed(mid: int, *, attempts: int = 1, ago: float = RETRY_AFTER) -> Failed:
    return Failed(id=mid, attempts=attempts, failed_at=NOW - ago)


def test_a_failed_message_is_nudged_again_once_the_agent_is_healthy() -> None:
    decision = _decide(failed=(_failed(4),))
    assert decision == Decision(Action.NUDGE, (4,))


def test_a_retry_goes_with_the_queued_messages_in_order() -> None:
    decision = _decide(queued=(9,), failed=(_failed(4), _failed(6)))
    assert decision == Decision(Action.NUDGE, (4, 6, 9))


def test_a_retry_waits_a_while_after_the_failure() -> None:
    assert _decide(failed=(_failed(4, ago=RETRY_AFTER - 0.5),)) == Decision(Action.WAIT)


def test_retries_are_bounded() -> None:
    """A message nudged MAX_NUDGES times without a receipt stays failed: no endless loop."""
    assert _decide(failed=(_failed(4, attempts=MAX_NUDGES),)) == Decision(Action.WAIT)
    spent = _decide(queued=(9,), failed=(_failed(4, attempts=MAX_NUDGES),))
    assert spent == Decision(Action.NUDGE, (9,))


@pytest.mark.parametrize(
    ("kwargs", "note"),
    [
        ({"state": "busy"}, "busy: delivered at the turn boundary"),
        ({"state": "waiting"}, "a permission dialog is open"),
        ({"state": "ended"}, "the recipient's session has ended"),
        ({"refusal": "the pane is at a shell prompt"}, "the pane is at a shell prompt"),
        ({"has_pane": False}, "not in tmux: read with agent-room inbox"),
    ],
)
def test_no_retry_into_an_unhealthy_recipient(kwargs: dict[str, object], note: str) -> None:
    decision = _decide(failed=(_failed(4),), **kwargs)  # type: ignore[arg-type]
    assert decision.action in {Action.WAIT, Action.HOLD}
    assert decision.note == note


def test_no_retry_while_a_nudge_is_open() -> None:
    nudge = _open((1,), age=0.0)
    assert _decide(queued=(1,), open_nudge=nudge, failed=(_failed(4),)).action is Action.WAIT


# -- agent kinds ------------------------------------------------------------------------


def test_settle_delays_by_agent_kind() -> None:
    assert settle_for("claude") < settle_for("codex") < settle_for("gemini")
    assert settle_for("codex") >= 0.02  # Codex turned an immediate Enter into a newline
    assert settle_for("gemini") > 0.03  # Gemini CLI's fast-Enter rule is 30 ms
    assert settle_for("unknown") > 0


def test_the_input_line_is_cleared_only_with_keys_checked_for_the_kind() -> None:
    assert clear_keys_for("claude") == ("C-e", "C-u")  # end of line, kill to its start
    assert clear_keys_for("unknown") == ()
    for kind in ("claude", "codex", "gemini", "unknown"):
        # never a key that can end a program, answer a dialog or open a menu
        assert not {"C-c", "C-d", "Escape", "Enter", "y", "n"} & set(clear_keys_for(kind))


# -- properties -------------------------------------------------------------------------

ids = st.lists(st.integers(1, 50), unique=True, max_size=6).map(lambda xs: tuple(sorted(xs)))
nudges = st.none() | st.builds(
    OpenNudge,
    message_ids=ids.filter(bool),
    last_try=st.floats(NOW - 100, NOW),
    enters=st.integers(0, MAX_EXTRA_ENTERS + 1),
)
failures = st.lists(
    st.builds(
        Failed,
        id=st.integers(51, 80),
        attempts=st.integers(1, MAX_NUDGES + 1),
        failed_at=st.floats(NOW - 100, NOW),
    ),
    unique_by=lambda f: f.id,
    max_size=4,
).map(tuple)
facts = st.fixed_dictionaries(
    {
        "state": st.sampled_from(STATES),
        "queued": ids,
        "open_nudge": nudges,
        "refusal": st.none() | st.just("the pane is at a shell prompt"),
        "has_pane": st.booleans(),
        "failed": failures,
    }
)


@given(facts)
def test_keys_go_only_to_an_idle_agent_at_its_prompt(given_facts: dict[str, object]) -> None:
    decision = _decide(**given_facts)  # type: ignore[arg-type]
    if decision.action in {Action.NUDGE, Action.ENTER}:
        assert given_facts["state"] == "idle"
        assert given_facts["refusal"] is None
        assert given_facts["has_pane"]


@given(facts)
def test_only_waiting_or_retryable_messages_are_named(given_facts: dict[str, object]) -> None:
    decision = _decide(**given_facts)  # type: ignore[arg-type]
    queued = set(given_facts["queued"])  # type: ignore[call-overload]
    failed: tuple[Failed, ...] = given_facts["failed"]  # type: ignore[assignment]
    retryable = {
        f.id for f in failed if f.attempts < MAX_NUDGES and NOW - f.failed_at >= RETRY_AFTER
    }
    if decision.action is Action.NUDGE:
        assert decision.message_ids
        assert set(decision.message_ids) <= queued | retryable
        assert list(decision.message_ids) == sorted(decision.message_ids)
    elif decision.action in {Action.ENTER, Action.FAIL}:
        nudge = given_facts["open_nudge"]
        assert isinstance(nudge, OpenNudge)
        assert decision.message_ids == nudge.message_ids
        assert set(nudge.message_ids) & queued
    else:
        assert decision.message_ids == ()


@given(facts)
def test_a_nudge_is_given_up_only_after_its_extra_enters(given_facts: dict[str, object]) -> None:
    decision = _decide(**given_facts)  # type: ignore[arg-type]
    if decision.action is Action.FAIL:
        nudge = given_facts["open_nudge"]
        assert isinstance(nudge, OpenNudge)
        assert nudge.enters >= MAX_EXTRA_ENTERS
        assert NOW - nudge.last_try >= RECEIPT_TIMEOUT


@given(facts)
def test_an_unreceipted_nudge_is_never_left_alone(given_facts: dict[str, object]) -> None:
    """Past the timeout, an agent at its prompt gets Enter again, or the nudge fails."""
    decision = _decide(**given_facts)  # type: ignore[arg-type]
    nudge = given_facts["open_nudge"]
    queued = set(given_facts["queued"])  # type: ignore[call-overload]
    if (
        isinstance(nudge, OpenNudge)
        and set(nudge.message_ids) & queued
        and NOW - nudge.last_try >= RECEIPT_TIMEOUT
        and given_facts["state"] == "idle"
        and given_facts["has_pane"]
        and given_facts["refusal"] is None
    ):
        assert decision.action in {Action.ENTER, Action.FAIL}
