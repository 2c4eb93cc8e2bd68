"""Circular handover detection (seed 002): pure, no room needed."""

from __future__ import annotations

import pytest

from agent_room.turn.core.cycles import (
    MAX_DEPTH,
    closes_cycle,
    cycle_edges,
    cycle_warnings,
    find_path,
    render_cycle,
    search,
)


def test_a_handover_back_to_the_sender_of_an_earlier_one_closes_a_cycle() -> None:
    earlier = [("a", "b"), ("b", "c")]
    assert closes_cycle(earlier, "c", "a") == ("c", "a", "b", "c")


def test_no_path_back_is_no_cycle() -> None:
    assert closes_cycle([("a", "b"), ("c", "d")], "b", "c") is None
    assert closes_cycle([], "a", "b") is None


def test_a_two_step_ping_pong_is_a_cycle() -> None:
    assert closes_cycle([("a", "b")], "b", "a") == ("b", "a", "b")


def test_the_shortest_loop_is_reported() -> None:
    earlier = [("b", "c"), ("c", "d"), ("d", "a"), ("b", "a")]
    assert closes_cycle(earlier, "a", "b") == ("a", "b", "a")


def test_loops_longer_than_the_depth_are_not_searched() -> None:
    chain = [(f"n{i}", f"n{i + 1}") for i in range(6)]
    assert closes_cycle(chain, "n6", "n0") is not None
    assert closes_cycle(chain, "n6", "n0", max_depth=4) is None
    longer = [(f"n{i}", f"n{i + 1}") for i in range(12)]
    assert closes_cycle(longer, "n12", "n0") is None  # beyond the default depth


def _chain(steps: int) -> list[tuple[str, str]]:
    """``n0 -> n1 -> ... -> n<steps>``: one handover per step."""
    return [(f"n{i}", f"n{i + 1}") for i in range(steps)]


@pytest.mark.parametrize("depth", [3, MAX_DEPTH])
def test_a_path_of_exactly_the_depth_in_steps_is_found_and_one_step_more_is_not(
    depth: int,
) -> None:
    """The limit counts steps (edges): a path of ``depth`` steps, ``depth + 1`` agents."""
    graph: dict[str, set[str]] = {}
    for source, target in _chain(depth + 1):
        graph.setdefault(source, set()).add(target)
    at_limit = tuple(f"n{i}" for i in range(depth + 1))
    assert find_path(graph, "n0", f"n{depth}", depth) == at_limit
    assert find_path(graph, "n0", f"n{depth + 1}", depth) is None
    assert search(lambda node: graph.get(node, ()), "n0", f"n{depth}", depth) == at_limit
    assert search(lambda node: graph.get(node, ()), "n0", f"n{depth + 1}", depth) is None


@pytest.mark.parametrize("depth", [3, MAX_DEPTH])
def test_a_loop_back_over_exactly_the_depth_of_handovers_is_found_and_one_longer_is_not(
    depth: int,
) -> None:
    """A handover closes a loop when ``depth`` earlier handovers (at most) lead back to
    its sender: the loop then has ``depth + 1`` handovers with the new one."""
    at_limit = _chain(depth)
    loop = closes_cycle(at_limit, f"n{depth}", "n0", depth)
    assert loop == (f"n{depth}", *(f"n{i}" for i in range(depth + 1)))
    assert closes_cycle(_chain(depth + 1), f"n{depth + 1}", "n0", depth) is None
    pending = [(depth + 1, f"n{depth}", "n0")]
    recent = [(i + 1, s, r) for i, (s, r) in enumerate(at_limit)] + pending
    assert cycle_warnings(pending, recent, depth) == {depth + 1: loop}


def test_by_default_a_loop_back_over_eight_handovers_is_found_and_over_nine_is_not() -> None:
    """The room's own limit, as every caller uses it (the handovers' badge and the loop
    breaker pass no depth): a test at ``MAX_DEPTH`` alone would follow the constant if it
    moved by one."""
    loop = closes_cycle(_chain(8), "n8", "n0")
    assert loop == ("n8", *(f"n{i}" for i in range(9)))
    assert closes_cycle(_chain(9), "n9", "n0") is None
    graph = dict(_chain(9))
    assert search(lambda node: [graph[node]] if node in graph else [], "n0", "n8") is not None
    assert search(lambda node: [graph[node]] if node in graph else [], "n0", "n9") is None
    for steps, expected in ((8, {9: loop}), (9, {})):
        closing = (steps + 1, f"n{steps}", "n0")
        recent = [(i + 1, s, r) for i, (s, r) in enumerate(_chain(steps))] + [closing]
        assert cycle_warnings([closing], recent) == expected


def test_find_path_handles_cycles_in_the_graph() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set()}
    assert find_path(graph, "a", "c") == ("a", "b", "c")
    assert find_path(graph, "c", "a") is None


def test_only_the_handover_that_closes_the_loop_gets_the_badge() -> None:
    recent = [(1, "backend", "frontend"), (2, "frontend", "api"), (3, "api", "backend")]
    pending = [(2, "frontend", "api"), (3, "api", "backend")]
    assert cycle_warnings(pending, recent) == {3: ("api", "backend", "frontend", "api")}


def test_a_handover_never_closes_a_loop_with_itself() -> None:
    assert cycle_warnings([(5, "a", "b")], [(5, "a", "b")]) == {}


def test_render() -> None:
    assert render_cycle(("a", "b", "a")) == "@a → @b → @a"


def test_search_asks_only_for_the_nodes_it_reaches() -> None:
    asked: list[str] = []
    graph = {"b": ["c"], "c": ["a"], "x": ["y"]}

    def neighbours(node: str) -> list[str]:
        asked.append(node)
        return graph.get(node, [])

    assert search(neighbours, "b", "a") == ("b", "c", "a")
    assert "x" not in asked
    assert cycle_edges(("a", "b", "c", "a")) == {("a", "b"), ("b", "c"), ("c", "a")}
