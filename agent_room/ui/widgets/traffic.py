"""``TrafficMatrix``: who talks to whom, weighted by traffic.

A sender x recipient matrix with shaded cells (the busier the pair, the darker the
block), then the busiest edges as arrows whose length follows their share. Terminals
draw grids far better than node-link diagrams, so the picture is a matrix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from textual.reactive import var
from textual.widget import Widget

from agent_room.core.snapshot import Edge, RoomSnapshot

SHADES = " ░▒▓█"
EMPTY = "·"
"""A cell of a pair that did not talk."""
MAX_NAMES = 8
"""Names in the matrix: the busiest ones; the rest only appear in the edge list."""
TOP_EDGES = 5
BAR = 14


def busiest_names(edges: tuple[Edge, ...], limit: int = MAX_NAMES) -> list[str]:
    """Names by total traffic in and out, busiest first (ties by name)."""
    totals: dict[str, int] = {}
    for edge in edges:
        totals[edge.sender] = totals.get(edge.sender, 0) + edge.count
        totals[edge.recipient] = totals.get(edge.recipient, 0) + edge.count
    ordered = sorted(totals, key=lambda n: (-totals[n], n))
    return ordered[:limit]


def short_labels(names: list[str]) -> dict[str, str]:
    """Each name without the prefix all of them share up to a separator (``agent-003``
    -> ``003``), so that labels cut to a column's width still tell the names apart."""
    if len(names) < 2:
        return {n: n for n in names}
    common = os.path.commonprefix(names)  # noqa: RUF071  (names, not paths)
    cut = max(common.rfind(sep) for sep in "-_.") + 1
    if any(len(n) <= cut for n in names):
        cut = 0
    return {n: n[cut:] for n in names}


def shade(count: int, most: int) -> str:
    """The block for a cell: blank for nothing, full for the busiest pair."""
    if count <= 0 or most <= 0:
        return EMPTY
    return SHADES[max(1, round(count / most * (len(SHADES) - 1)))]


def _shape(edges: tuple[Edge, ...] | None) -> tuple[int, ...]:
    """What the matrix's height follows: how many names and edges it shows, how wide
    their labels and the longest edge line are (a line too wide for the panel wraps; an
    edge line is as long as its bar and count, the rest is padded)."""
    if not edges:
        return (0,)
    names = busiest_names(edges)
    most = max(e.count for e in edges)
    lines = (round(e.count / most * BAR) + len(f"{e.count:,}") for e in edges[:TOP_EDGES])
    return (len(names), max(map(len, names)), min(len(edges), TOP_EDGES), max(lines))


class TrafficMatrix(Widget):
    """Who talks to whom."""

    DEFAULT_CSS = """
    TrafficMatrix { height: auto; }
    """

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._matrix: KeptMatrix | None = None
        """The matrix as last drawn."""

    def on_mount(self) -> None:
        """Redraw in the new colours when the theme changes."""
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self.refresh(layout=True)

    def watch_snapshot(self, old: RoomSnapshot | None, new: RoomSnapshot | None) -> None:
        """Redraw only when the traffic changed; lay the screen out again only when the
        matrix may take another height (that redraws every panel, and the counts move
        on with every message)."""
        before, after = (old.traffic if old else None), (new.traffic if new else None)
        if before != after:
            self.refresh(layout=_shape(before) != _shape(after))

    def render(self) -> RenderableType:
        """The matrix and the busiest edges."""
        edges = self.snapshot.traffic if self.snapshot else ()
        if not edges:
            return Text("No messages yet.", style="dim")
        colour = self.app.theme_variables.get("traffic-edge", "")
        names = busiest_names(edges)
        labels = short_labels(names)
        counts = {(e.sender, e.recipient): e.count for e in edges}
        most = max(e.count for e in edges)
        grid = Grid(
            tuple(labels[name][:6] for name in names),
            tuple(
                (
                    f"@{labels[sender]}"[:10],
                    tuple(shade(counts.get((sender, r), 0), most) for r in names),
                )
                for sender in names
            ),
            colour,
        )
        if self._matrix is None or self._matrix.grid != grid:
            self._matrix = KeptMatrix(grid)
        lines: list[RenderableType] = [self._matrix, Text("")]
        for edge in edges[:TOP_EDGES]:
            length = max(1, round(edge.count / most * BAR))
            line = Text(f"@{edge.sender}"[:10].rjust(10) + " ")
            line.append("━" * length + "▶", style=colour)
            line.append(f" @{edge.recipient}"[:11].ljust(12))
            line.append(f"{edge.count:,}", style="bold")
            lines.append(line)
        return Group(*lines)


@dataclass(frozen=True)
class Grid:
    """What the matrix shows: the column labels, each row's label and shades, the colour
    of traffic."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    colour: str


class KeptMatrix:
    """The matrix of a ``Grid``, drawn through Rich once for each width it is drawn at.

    The counts move on with every message, the shades seldom: the edge lines under the
    matrix are drawn anew, the matrix (a Rich table, whose columns are measured at
    each drawing) only when its shades changed."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self._lines: dict[tuple[object, ...], list[list[Segment]]] = {}

    def table(self) -> Table:
        """The matrix as a Rich table."""
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
        table.add_column("from \\ to", style="bold", no_wrap=True)
        for label in self.grid.columns:
            table.add_column(label, justify="center", no_wrap=True)
        for label, shades in self.grid.rows:
            cells = (Text(s, style="dim" if s == EMPTY else self.grid.colour) for s in shades)
            table.add_row(label, *cells)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        options = options.update(height=None)  # the table's own lines, as in a group
        key = (options.max_width, options.min_width, options.no_wrap, options.overflow,
               options.justify)  # fmt: skip
        lines = self._lines.get(key)
        if lines is None:
            lines = self._lines[key] = console.render_lines(self.table(), options, pad=False)
        for line in lines:
            yield from line
            yield Segment.line()
