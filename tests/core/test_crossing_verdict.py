"""``core.crossing.judge``: the one verdict on output that would cross a link, with the
link's limits, the turn breaker and the anchor reminder decided together."""

from __future__ import annotations

from agent_room.core.crossing import LinkFacts, Outcome, Verdict, judge
from agent_room.core.links import LinkState

NOW = 1000.0


def facts(**given: object) -> LinkFacts:
    base: dict[str, object] = {
        "state": LinkState.OPEN,
        "crossings": 0,
        "budget": 10,
        "recent": (),
        "anchored": True,
        "reminded": False,
    }
    return LinkFacts(**{**base, **given})  # type: ignore[arg-type]


def verdict(found: LinkFacts, *, holds: bool = False, loop_max: int = 3) -> Verdict:
    return judge(found, now=NOW, loop_max=loop_max, loop_window=60.0, breaker_holds=holds)


def test_an_answer_with_its_anchor_set_crosses_without_a_reminder() -> None:
    assert verdict(facts()) == Verdict(Outcome.CROSSED)


def test_an_answer_without_an_anchor_is_reminded_once_per_interval() -> None:
    assert verdict(facts(anchored=False)).remind
    assert not verdict(facts(anchored=False, reminded=True)).remind


def test_the_crossing_that_reaches_the_budget_crosses_and_closes_the_link() -> None:
    assert verdict(facts(crossings=9)) == Verdict(Outcome.CROSSED, close=True)
    assert verdict(facts(crossings=10)) == Verdict(Outcome.CLOSED, close=True)
    assert verdict(facts(state=LinkState.CLOSED)) == Verdict(Outcome.CLOSED)


def test_the_loop_breaker_freezes_at_its_limit_and_not_before() -> None:
    below = facts(recent=(NOW - 2, NOW - 1))
    at_limit = facts(recent=(NOW - 3, NOW - 2, NOW - 1))
    assert verdict(below).outcome is Outcome.CROSSED
    assert verdict(at_limit) == Verdict(Outcome.HELD, freeze=True)
    assert verdict(facts(recent=(NOW - 90, NOW - 80, NOW - 70))).outcome is Outcome.CROSSED


def test_the_turn_breaker_holds_what_would_have_crossed_and_never_reminds() -> None:
    held = verdict(facts(anchored=False, crossings=9), holds=True)
    assert held == Verdict(Outcome.HELD, breaker_held=True)  # no close: nothing crossed
    assert verdict(facts(state=LinkState.FROZEN), holds=True) == Verdict(Outcome.HELD)
