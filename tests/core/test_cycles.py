"""Circular handover detection (seed 002): pure, no room needed."""

from __future__ import annotations

from agent_room.core.cycles import closes_cycle, cycle_warnings, find_path, render_cycle


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
    from agent_room.core.cycles import cycle_edges, search

    asked: list[str] = []
    graph = {"b": ["c"], "c": ["a"], "x": ["y"]}

    def neighbours(node: str) -> list[str]:
        asked.append(node)
        return graph.get(node, [])

    assert search(neighbours, "b", "a") == ("b", "c", "a")
    assert "x" not in asked
    assert cycle_edges(("a", "b", "c", "a")) == {("a", "b"), ("b", "c"), ("c", "a")}
