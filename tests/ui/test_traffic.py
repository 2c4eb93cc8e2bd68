"""The who-talks-to-whom picture's pure parts: which names, which shade, which labels,
and the matrix drawn once for as long as its shades stay."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult

from agent_room.core.snapshot import Edge, RoomSnapshot
from agent_room.ui.widgets.traffic import (
    EMPTY,
    MAX_NAMES,
    SHADES,
    Grid,
    KeptMatrix,
    ShrunkMatrix,
    TrafficMatrix,
    busiest_names,
    shade,
    short_labels,
)


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


def test_the_matrix_drawn_by_hand_is_richs_table_wherever_it_fits() -> None:
    """Where the matrix fits its natural widths, its lines are drawn without Rich's
    table (measured anew at every drawing): segment for segment what the table draws,
    wide characters, empty cells and a theme without a traffic colour included."""
    rng = random.Random(26)
    drawn = 0
    for _ in range(400):
        n = rng.randint(1, MAX_NAMES)
        labels = tuple(rng.choice(["a", "api", "backen", "fr", "ü", "测试"]) for _ in range(n))
        rows = tuple(
            (
                rng.choice(["@a", "@backend", "@frontend1", "@测试"]),
                tuple(rng.choice(SHADES[1:] + EMPTY) for _ in range(n)),
            )
            for _ in range(n)
        )
        grid = Grid(labels, rows, rng.choice(["#ff0000", "", "red", "bold blue"]))
        width = rng.randint(8, 80)
        widths = grid.natural_widths(width)
        if widths is None:
            continue  # too narrow: Rich's table draws it (KeptMatrix)
        console = Console(width=width, color_system="truecolor")
        table = console.render_lines(KeptMatrix(grid).table(), console.options, pad=False)
        by_hand = [grid.header(widths), *(grid.row(row, widths) for row in rows)]
        assert [line[:-1] for line in by_hand] == table  # each ends with its new line
        drawn += 1
    assert drawn > 100


def test_a_matrix_too_wide_is_drawn_cell_by_cell_as_richs_table_shrinks_it() -> None:
    """Where the matrix does not fit its natural widths, Rich's table measures the columns
    (once for each set of labels and width) and each line is put together of cells drawn
    by Rich once: segment for segment the table, labels cut with an ellipsis, columns
    shrunk to nothing and lines cut at the panel's edge included."""
    rng = random.Random(27)
    shrunk = 0
    matrix = ShrunkMatrix()  # kept across grids: widths kept by the columns' measurements
    for _ in range(400):
        n = rng.randint(1, MAX_NAMES)
        names = ["agent0", "backen", "fr", "ü", "测试", "[b]x"]
        labels = tuple(rng.choice(names) for _ in range(n))
        rows = tuple(
            (
                rng.choice(["@agent03", "@backend", "@frontend1", "@测试", "@[i]x"]),
                tuple(rng.choice(SHADES[1:] + EMPTY) for _ in range(n)),
            )
            for _ in range(n)
        )
        grid = Grid(labels, rows, rng.choice(["#ff0000", "", "bold blue"]))
        width = rng.randint(8, 70)
        console = Console(width=width, color_system="truecolor")
        widths = matrix.widths(grid, console, console.options)
        measured = console.options.update(height=None)
        assert widths == tuple(KeptMatrix(grid).table()._calculate_column_widths(console, measured))
        if grid.natural_widths(width) is not None or widths[0] <= 1:
            continue  # drawn by hand, or a sliver that Rich's table draws whole
        table = console.render_lines(KeptMatrix(grid), console.options, pad=False)
        lines = [
            matrix.header(grid, widths, console, console.options),
            *(matrix.row(grid, row, widths, console, console.options) for row in rows),
        ]
        assert [line[:-1] for line in lines] == table
        shrunk += 1
    assert shrunk > 100


def _traffic(step: int, agents: int = 10) -> tuple[Edge, ...]:
    """A room where agent i has sent to agent i+1 about ``step / agents`` times: the
    busiest names, the shades and the counts move on at every step."""
    counts: dict[tuple[str, str], int] = {}
    for n in range(step):
        pair = (f"agent-{n % agents:02d}", f"agent-{(n * 3 + 1) % agents:02d}")
        counts[pair] = counts.get(pair, 0) + 1
    edges = (Edge(s, r, c) for (s, r), c in counts.items())
    return tuple(sorted(edges, key=lambda e: (-e.count, e.sender, e.recipient)))


class MatrixApp(App[None]):
    CSS = "TrafficMatrix { height: 1fr; padding: 0 1; }"

    def compose(self) -> ComposeResult:
        yield TrafficMatrix(id="traffic")


async def _screen(snapshots: list[RoomSnapshot], size: tuple[int, int]) -> list[str]:
    """What the screen shows (text and styles, line by line) after ``snapshots`` in turn."""
    app = MatrixApp()
    async with app.run_test(size=size) as pilot:
        matrix = app.query_one(TrafficMatrix)
        for snapshot in snapshots:
            matrix.snapshot = snapshot
            await pilot.pause()
        await pilot.pause()
        update = app.screen._compositor.render_update(full=True)
        console = Console(width=size[0], color_system="truecolor", record=True, file=io.StringIO())
        console.print(update)
        return console.export_text(styles=True).splitlines()


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(60, 24), (30, 24)])
async def test_the_matrix_moved_on_line_by_line_shows_what_a_fresh_one_does(
    size: tuple[int, int],
) -> None:
    """Each picture repaints only the matrix's lines that changed: after many pictures
    (shades, order and counts moving on; at a width where Rich's table draws it too), the
    screen is the one a matrix shown only the last picture draws."""
    pictures = [RoomSnapshot(taken_at=0.0, home="/h", traffic=_traffic(n)) for n in range(70)]
    for end in (12, 40, 70):
        assert await _screen(pictures[:end], size) == await _screen(pictures[end - 1 : end], size)
