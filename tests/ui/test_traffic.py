"""The who-talks-to-whom picture's pure parts: which names, which shade, which labels."""

from __future__ import annotations

from agent_room.core.snapshot import Edge
from agent_room.ui.widgets.traffic import busiest_names, shade, short_labels


def test_the_busiest_names_in_and_out_come_first() -> None:
    edges = (Edge("a", "b", 5), Edge("c", "b", 1), Edge("b", "d", 2))
    assert busiest_names(edges) == ["b", "a", "d", "c"]
    assert busiest_names(edges, limit=2) == ["b", "a"]


def test_shades_run_from_nothing_to_the_busiest_pair() -> None:
    assert shade(0, 10) == "·"
    assert shade(1, 100) == "░"  # any traffic shows
    assert shade(10, 10) == "█"


def test_labels_drop_a_shared_prefix_up_to_a_separator() -> None:
    assert short_labels(["agent-003", "agent-017"]) == {"agent-003": "003", "agent-017": "017"}
    assert short_labels(["api", "app"]) == {"api": "api", "app": "app"}  # no separator
    assert short_labels(["web-a", "web-"])["web-a"] == "web-a"  # nothing would be left
    assert short_labels(["solo"]) == {"solo": "solo"}
