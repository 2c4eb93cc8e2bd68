"""The who-talks-to-whom picture's pure parts: which names, which shade, which labels,
and the matrix drawn once for as long as its shades stay."""

from __future__ import annotations

import pytest
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from agent_room.core.snapshot import Edge
from agent_room.ui.widgets.traffic import Grid, KeptMatrix, busiest_names, shade, short_labels


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


def test_the_kept_matrix_draws_as_its_table_through_rich_once_a_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The counts move on with every message, the shades seldom: a matrix of the same
    shades is drawn once for each width, and looks as its table drawn anew does."""
    grid = Grid(("01", "02"), (("@01", ("·", "█")), ("@02", ("░", "·"))), "red")
    kept = KeptMatrix(grid)
    tables: list[Table] = []
    table = kept.table

    def counted() -> Table:
        tables.append(table())
        return tables[-1]

    monkeypatch.setattr(kept, "table", counted)
    for width in (40, 40, 12, 40):
        console = Console(width=width, color_system="truecolor")
        fresh = console.render_lines(Group(table(), Text("edges")), console.options)
        assert console.render_lines(Group(kept, Text("edges")), console.options) == fresh
    assert len(tables) == 2  # 40, then 12
