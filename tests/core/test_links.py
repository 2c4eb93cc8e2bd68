"""The link rules: framing, acknowledgements, the checkpoint filter, roles, budget, loops."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agent_room.core.crossing import (
    Outcome,
    Started,
    TurnGroup,
    apply_limits,
    assess,
    group_turns,
    in_window,
)
from agent_room.core.links import (
    ACK_MAX_WORDS,
    ACK_PHRASES,
    ANTI_CHATTINESS_RULES,
    DEFAULT_BUDGET,
    LinkSettings,
    LinkState,
    Role,
    Side,
    check_budget,
    check_close,
    check_patterns,
    check_transition,
    frame,
    is_ack,
    parse_loop,
    role_of,
    rules_text,
    sever_verdict,
)
from agent_room.turn.core.errors import BadInput, Refused
from agent_room.turn.core.prompts import DEFAULT_CHECKPOINT_PATTERNS

# -- framing ----------------------------------------------------------------------------


def test_frame_reads_as_a_direct_statement() -> None:
    assert frame("worker-feasibility", "  The core finding: X.\n") == (
        "[From @worker-feasibility] The core finding: X."
    )


@given(st.text(min_size=1), st.integers(min_value=40, max_value=400))
def test_framed_output_never_exceeds_the_limit(output: str, limit: int) -> None:
    text = frame("b", output, limit=limit)
    assert len(text.encode()) <= limit
    assert text.startswith("[From @b]")


def test_frame_says_when_it_cut() -> None:
    text = frame("b", "x" * 1000, limit=100)
    assert text.endswith("[... truncated by the room]")


# -- acknowledgements -------------------------------------------------------------------


@pytest.mark.parametrize(
    "output",
    ["ok", "OK.", "Thanks!", "thank you very much", "got it 👍", "👍", "Noted.", "ok thanks",
     "Understood, will do.", "Sounds good!", "Roger that ✅", "Nothing new to add."],
)  # fmt: skip
def test_acknowledgements_are_recognised(output: str) -> None:
    assert is_ack(output)


@pytest.mark.parametrize(
    "output",
    ["", "   ", "do it", "ok, the bug is in adapters.py", "Thanks. Effort: 3-4 sessions.",
     "fix /tmp/x", "Great point! But the registry is shared.", "ok " * 20, "42", "no"],
)  # fmt: skip
def test_content_is_not_an_acknowledgement(output: str) -> None:
    assert not is_ack(output)


@given(
    st.lists(st.sampled_from(sorted(ACK_PHRASES)), min_size=1, max_size=3),
    st.sampled_from(["", ".", "!", " 👍", ","]),
)
def test_any_run_of_ack_phrases_is_an_ack(phrases: list[str], tail: str) -> None:
    text = " ".join(phrases) + tail
    words = len(text.split()) - (tail == " 👍")
    assert is_ack(text) == (words <= ACK_MAX_WORDS)  # longer is no bare acknowledgement


@given(st.sampled_from(sorted(ACK_PHRASES)), st.from_regex(r"[a-z]{3,12}", fullmatch=True))
def test_a_word_of_content_makes_it_content(phrase: str, word: str) -> None:
    assume(all(word != w for p in ACK_PHRASES for w in p.split()))  # not itself an ack word
    assert not is_ack(f"{phrase} {word}")


# -- the checkpoint filter and what a turn does -----------------------------------------


def group(
    kind: str = "message", prompt: str = "do X", output: str | None = "X is done"
) -> TurnGroup:
    """A finished turn; by default one that answered a peer's message."""
    return TurnGroup(head=1, last=1, kind=kind, prompt=prompt, output=output, failed=False)


PATTERNS = DEFAULT_CHECKPOINT_PATTERNS


def test_a_turn_with_content_crosses() -> None:
    assert assess(group(), 1, Started(), PATTERNS) is Outcome.CROSSED


def test_checkpoint_turns_never_cross() -> None:
    by_prompt = group(kind="unknown", prompt="[agent-room checkpoint] anything to save?")
    assert assess(by_prompt, 1, Started(), PATTERNS) is Outcome.CHECKPOINT
    assert assess(group(prompt="ANCHOR: back to task 3"), 1, Started(), PATTERNS) is (
        Outcome.CHECKPOINT
    )


def test_checkpoint_patterns_are_configurable() -> None:
    custom = ("^HEARTBEAT",)
    assert assess(group(prompt="HEARTBEAT: on track?"), 1, Started(), custom) is (
        Outcome.CHECKPOINT
    )
    assert assess(group(prompt="HEARTBEAT: on track?"), 1, Started(), PATTERNS) is (Outcome.CROSSED)
    default = group(kind="checkpoint", prompt="[agent-room checkpoint] status?")
    # the room's choice wins: not a checkpoint there, so a person's turn (it answers no peer)
    assert assess(default, 1, Started(), custom) is Outcome.PERSON


def test_turns_of_the_rooms_own_messages_are_housekeeping() -> None:
    nudged = group(kind="nudge", prompt="[agent-room] 1 new message from @room (#4)")
    assert assess(nudged, 1, Started(room_only=True), PATTERNS) is Outcome.ROOM
    for kind in ("timer", "reminder", "notice"):  # as the hook stored it
        assert assess(group(kind=kind), 1, Started(), PATTERNS) is Outcome.ROOM


def test_only_a_turn_that_answers_a_peer_crosses() -> None:
    assert assess(group(kind="human"), 1, Started(), PATTERNS) is Outcome.PERSON
    operator = Started(person=True)  # the operator's own message: a person's
    assert assess(group(kind="message"), 1, operator, PATTERNS) is Outcome.PERSON
    answered = Started(links=frozenset({1}))  # continued with the peer's crossing
    assert assess(group(kind="human"), 1, answered, PATTERNS) is Outcome.CROSSED
    assert assess(group(kind="crossing"), 1, Started(), PATTERNS) is Outcome.CROSSED


def test_a_native_wrapped_nudge_is_judged_as_the_typed_one() -> None:
    wrapped = group(
        kind="reminder",
        prompt='<cross-session-message from="uds:/s/1.sock" from-name="agent-room">\n'
        "[agent-room] 1 new message from @room (#4)\n</cross-session-message>",
    )
    assert assess(wrapped, 1, Started(room_only=True), PATTERNS) is Outcome.ROOM
    checkpoint = group(
        kind="message",
        prompt='<cross-session-message from="uds:/s/1.sock">\nANCHOR: back to it\n'
        "</cross-session-message>",
    )
    assert assess(checkpoint, 1, Started(), PATTERNS) is Outcome.CHECKPOINT


def test_an_answer_to_another_link_stays_there() -> None:
    assert assess(group(), 1, Started(links=frozenset({2})), PATTERNS) is Outcome.ELSEWHERE
    assert assess(group(), 2, Started(links=frozenset({2})), PATTERNS) is Outcome.CROSSED
    mixed = Started(links=frozenset({2}), other=True)  # also a plain chat: crosses everywhere
    assert assess(group(), 1, mixed, PATTERNS) is Outcome.CROSSED


@pytest.mark.parametrize(
    ("output", "outcome"),
    [(None, Outcome.EMPTY), ("  \n", Outcome.EMPTY), ("thanks!", Outcome.ACK)],
)
def test_empty_and_ack_outputs_stay(output: str | None, outcome: Outcome) -> None:
    assert assess(group(output=output), 1, Started(), PATTERNS) is outcome


def test_failed_turns_stay() -> None:
    failed = group()._replace(failed=True)
    assert assess(failed, 1, Started(), PATTERNS) is Outcome.FAILED


# -- turns as the peer sees them --------------------------------------------------------


def row(id_: int, kind: str = "human", *, stopped: bool = True, output: str = "") -> dict[str, Any]:
    return {
        "id": id_,
        "kind": kind,
        "prompt": f"prompt {id_}",
        "stopped_at": 1.0 if stopped else None,
        "output": output or f"out {id_}",
        "failed": 0,
    }


def test_a_blocked_stop_and_its_continuation_are_one_turn_with_the_last_output() -> None:
    turns = [row(1, "nudge"), row(2, "unknown"), row(3, "unknown")]
    [only] = group_turns(turns, busy=False)
    assert (only.head, only.last, only.kind, only.output) == (1, 3, "nudge", "out 3")


def test_a_busy_session_may_still_continue_its_last_turn() -> None:
    turns = [row(1), row(2, "unknown")]
    assert group_turns(turns, busy=True) == []
    assert [g.head for g in group_turns([*turns, row(3, stopped=False)], busy=True)] == [1]


def test_a_turn_still_running_is_left_for_later() -> None:
    assert group_turns([row(1, stopped=False)], busy=False) == []


def test_a_continuation_of_an_earlier_turn_is_an_orphan() -> None:
    before = row(4)
    [orphan, real] = group_turns([row(5, "unknown"), row(6)], busy=False, before=before)
    assert (orphan.orphan, orphan.continued, real.orphan) == (True, (1.0, 1.0), False)
    assert assess(orphan, 1, Started(), PATTERNS) is Outcome.EARLIER
    answered = Started(links=frozenset({1}))
    assert assess(orphan, 1, answered, PATTERNS) is Outcome.CROSSED
    assert assess(orphan, 2, answered, PATTERNS) is Outcome.EARLIER


def test_an_interrupted_turn_says_nothing() -> None:
    groups = group_turns([row(1, stopped=False), row(2)], busy=False)
    assert [g.head for g in groups] == [2]


@given(st.lists(st.sampled_from(["human", "nudge", "unknown", "checkpoint"]), max_size=12))
def test_groups_cover_the_rows_in_order_once(kinds: list[str]) -> None:
    turns = [row(i + 1, k) for i, k in enumerate(kinds)]
    groups = group_turns(turns, busy=False)
    covered = [i for g in groups for i in range(g.head, g.last + 1)]
    assert covered == [t["id"] for t in turns]
    assert all(g.kind != "unknown" for g in groups[1:])


# -- roles and lifecycle ----------------------------------------------------------------


def test_roles_by_session() -> None:
    assert role_of("s1", "s1", "s2") is Role.INITIATOR
    assert role_of("s2", "s1", "s2") is Role.RESPONDER
    assert role_of("s3", "s1", "s2") is None


def test_only_the_initiator_or_operator_closes() -> None:
    check_close(3, Role.INITIATOR, "a", operator=False)
    check_close(3, None, "a", operator=True)
    with pytest.raises(Refused, match="only the initiator @a can close link #3"):
        check_close(3, Role.RESPONDER, "a", operator=False)
    with pytest.raises(Refused, match="not in link #3"):
        check_close(3, None, "a", operator=False)


def test_state_transitions() -> None:
    check_transition(1, LinkState.OPEN, LinkState.FROZEN)
    check_transition(1, LinkState.FROZEN, LinkState.OPEN)
    check_transition(1, LinkState.FROZEN, LinkState.CLOSED)
    for state, target in [
        (LinkState.CLOSED, LinkState.OPEN),
        (LinkState.CLOSED, LinkState.CLOSED),
        (LinkState.FROZEN, LinkState.FROZEN),
        (LinkState.OPEN, LinkState.OPEN),
    ]:
        with pytest.raises(Refused):
            check_transition(1, state, target)


def sides(a: str | None = "idle", b: str | None = "idle", **kw: Any) -> list[Side]:
    return [
        Side(Role.INITIATOR, a, kw.get("a_left", False), kw.get("a_end")),
        Side(Role.RESPONDER, b, kw.get("b_left", False), kw.get("b_end")),
    ]


def test_severed_when_a_session_stays_ended_or_leaves() -> None:
    assert sever_verdict(sides("idle", "busy"), now=100, grace=30) == (None, False)
    assert sever_verdict(sides("idle", "ended", b_end=60.0), now=100, grace=30) == (
        "the responder's session ended",
        False,
    )
    assert sever_verdict(sides("ended", "idle", a_end=None), now=100, grace=30)[0] == (
        "the initiator's session ended"
    )
    assert sever_verdict(sides(b_left=True), now=100, grace=30)[0] == "the responder left the room"
    assert sever_verdict(sides(None), now=100, grace=30)[0] == "the initiator left the room"


def test_an_ended_session_may_resume_within_the_grace() -> None:
    assert sever_verdict(sides("idle", "ended", b_end=90.0), now=100, grace=30) == (None, True)
    assert sever_verdict(sides("idle", "ended", b_end=90.0), now=100, grace=0)[0] is not None


def test_rules_are_the_seeds_five_and_name_the_roles() -> None:
    text = rules_text(4, "a", "b", Role.INITIATOR, 8)
    assert all(rule in text for rule in ANTI_CHATTINESS_RULES)
    assert "Link #4" in text
    assert "only you can close it" in text
    assert "At most 8" in text
    assert "you cannot close it" in rules_text(4, "b", "a", Role.RESPONDER, 8)


# -- budget and loop breaker ------------------------------------------------------------


def limits(state: LinkState = LinkState.OPEN, crossings: int = 0, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "budget": 8,
        "recent": [],
        "now": 1000.0,
        "loop_max": 6,
        "loop_window": 60.0,
    } | kw
    return apply_limits(state, crossings=crossings, **args)


def test_the_crossing_that_spends_the_budget_crosses_then_closes() -> None:
    assert limits(crossings=6) == (Outcome.CROSSED, False, False)
    assert limits(crossings=7) == (Outcome.CROSSED, False, True)
    assert limits(crossings=8) == (Outcome.CLOSED, False, True)
    assert limits(LinkState.CLOSED, crossings=3) == (Outcome.CLOSED, False, False)


def test_frozen_links_hold_outputs() -> None:
    assert limits(LinkState.FROZEN, crossings=2) == (Outcome.HELD, False, False)


def test_more_than_n_in_the_window_freezes() -> None:
    recent = [995.0, 990.0, 980.0, 970.0, 960.0, 950.0]
    assert limits(crossings=6, recent=recent) == (Outcome.HELD, True, False)
    assert limits(crossings=6, recent=recent[:5]).outcome is Outcome.CROSSED
    stale = [900.0, 910.0, 920.0, 930.0, 939.0, 995.0]  # five of them outside the window
    assert limits(crossings=6, recent=stale).outcome is Outcome.CROSSED
    assert limits(crossings=6, recent=recent, loop_max=0).outcome is Outcome.CROSSED  # off


def test_in_window_counts_only_the_last_seconds() -> None:
    assert in_window([1.0, 50.0, 100.0], 100.0, 60.0) == 2


@given(
    st.integers(min_value=1, max_value=20),
    st.lists(st.floats(min_value=0, max_value=30), max_size=60),
    st.integers(min_value=0, max_value=8),
)
def test_crossings_never_exceed_the_budget(budget: int, gaps: list[float], loop_max: int) -> None:
    state, crossings, now = LinkState.OPEN, 0, 0.0
    times: list[float] = []
    for gap in gaps:
        now += gap
        limit = apply_limits(
            state,
            crossings=crossings,
            budget=budget,
            recent=times,
            now=now,
            loop_max=loop_max,
            loop_window=60.0,
        )
        if limit.outcome is Outcome.CROSSED:
            crossings += 1
            times.append(now)
        if limit.freeze:
            assert in_window(times, now, 60.0) >= loop_max
            state = LinkState.OPEN  # the operator thaws at once
        if limit.close:
            state = LinkState.CLOSED
    assert crossings <= budget
    assert (state is LinkState.CLOSED) == (crossings == budget)


# -- settings ---------------------------------------------------------------------------


def test_settings_default_and_ignore_unusable_values() -> None:
    assert LinkSettings.from_mapping({}) == LinkSettings()
    assert LinkSettings().budget == DEFAULT_BUDGET == 8
    odd = LinkSettings.from_mapping({"budget": 0, "loop_max": -1, "checkpoint_patterns": []})
    assert odd == LinkSettings()
    custom = LinkSettings.from_mapping({"budget": 3, "checkpoint_patterns": ["^X"]})
    assert (custom.budget, custom.checkpoint_patterns) == (3, ("^X",))


def test_setting_checks() -> None:
    assert parse_loop("6/60") == (6, 60.0)
    assert parse_loop("off")[0] == 0
    for bad in ("6", "0/60", "6/0", "x/y"):
        with pytest.raises(BadInput, match="invalid loop breaker"):
            parse_loop(bad)
    with pytest.raises(BadInput, match="invalid checkpoint pattern"):
        check_patterns(["(unclosed"])
    with pytest.raises(BadInput):
        check_patterns([" "])
    with pytest.raises(BadInput, match="1 to 1000"):
        check_budget(0)


def test_a_pairs_budget_carries_over_and_says_who_grants_more() -> None:
    from agent_room.core.links import Previous, carried_budget, spent_refusal

    assert carried_budget(8, None) == 8
    assert carried_budget(8, Previous(1, 8, 3)) == 5
    assert carried_budget(20, Previous(1, 8, 8)) == 0  # a higher room budget resets nothing
    assert carried_budget(8, Previous(1, 12, 8)) == 4  # the operator granted 4
    text = spent_refusal("a", "b", Previous(3, 8, 8), 3600)
    assert text.startswith("the turn budget between @a and @b is spent: link #3 crossed 8 of 8")
    assert "closed less than 1h ago" in text
    assert text.endswith("agent-room link grant 3 COUNT")
