"""``TrafficMatrix``: who talks to whom, weighted by traffic.

A sender x recipient matrix with shaded cells (the busier the pair, the darker the
block), then the busiest edges as arrows whose length follows their share. Terminals
draw grids far better than node-link diagrams, so the picture is a matrix.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.geometry import Region
from textual.reactive import var
from textual.strip import Strip
from textual.widget import Widget

from agent_room.core.snapshot import Edge, RoomSnapshot

SHADES = " ░▒▓█"
CORNER = "from \\ to"
"""The label column's header."""
EMPTY = "·"
"""A cell of a pair that did not talk."""
MAX_NAMES = 8
"""Names in the matrix: the busiest ones; the rest only appear in the edge list."""
TOP_EDGES = 5
BAR = 14
KEPT_LINES = 256
"""Lines kept for reuse (matrix rows, edge lines) before the cache starts over."""
BOLD = Style(bold=True)
DIM = Style(dim=True)
PLAIN = Style()


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


def _shape(edges: tuple[Edge, ...] | None, names: list[str]) -> tuple[int, ...]:
    """What the matrix's height follows: how many names and edges it shows, how wide
    their labels and the longest edge line are (a line too wide for the panel wraps; an
    edge line is as long as its bar and count, the rest is padded); ``names`` are the
    busiest (``busiest_names``)."""
    if not edges:
        return (0,)
    most = max(e.count for e in edges)
    lines = (round(e.count / most * BAR) + len(f"{e.count:,}") for e in edges[:TOP_EDGES])
    return (len(names), max(map(len, names)), min(len(edges), TOP_EDGES), max(lines))


class TrafficMatrix(Widget):
    """Who talks to whom, drawn line by line (Textual's line API): each line is kept
    while what it shows stays, and a new picture of the room repaints only the lines
    that changed (a message moves a count or two, and a shade now and then)."""

    DEFAULT_CSS = """
    TrafficMatrix { height: auto; }
    """

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._drawn: list[tuple[object, Strip]] | None = None
        """Each line as last drawn, with what it shows; None: draw them all again."""
        self._look: tuple[object, ...] | None = None
        """The width, base style and traffic colour the lines were drawn for."""
        self._kept: dict[object, list[Strip]] = {}
        """The lines of each matrix row, edge line and header, by what they show."""
        self._shrunk = ShrunkMatrix()
        """The columns and cells of a matrix too wide for its natural columns."""
        self._matrix: KeptMatrix | None = None
        """Rich's table of a matrix in a sliver of a panel, as last drawn."""
        self._measured: tuple[tuple[Edge, ...] | None, tuple[int, ...], list[str]] = (
            None,
            (0,),
            [],
        )
        """The traffic as last measured, its shape and its busiest names: each picture's
        traffic is counted once (it is compared with the next picture's)."""

    def on_mount(self) -> None:
        """Redraw in the new colours when the theme changes."""
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        self.refresh(layout=True)

    def watch_snapshot(self, old: RoomSnapshot | None, new: RoomSnapshot | None) -> None:
        """Repaint only the lines that changed; lay the screen out again only when the
        matrix may take another height (that redraws every panel, and the counts move
        on with every message)."""
        before, after = (old.traffic if old else None), (new.traffic if new else None)
        if before == after:
            return
        drawn = self._drawn
        reshaped = self._shape_of(before) != self._shape_of(after)
        if reshaped or drawn is None or not self.is_mounted:
            self._drawn = None
            self.refresh(layout=reshaped)
            return
        look = self._look
        lines = self._lines()
        if self._look != look:  # another width or colours: every line is new
            self.refresh()
            return
        width = self.size.width
        for y in range(max(len(drawn), len(lines))):
            if y >= len(drawn) or y >= len(lines) or drawn[y][0] != lines[y][0]:
                self.refresh(Region(0, y, width, 1))

    def _measure(self, edges: tuple[Edge, ...] | None) -> tuple[tuple[int, ...], list[str]]:
        """The shape and the busiest names of ``edges``, kept for the last traffic."""
        kept, shape, names = self._measured
        if kept is not edges:
            names = busiest_names(edges) if edges else []
            shape = _shape(edges, names)
            self._measured = (edges, shape, names)
        return shape, names

    def _shape_of(self, edges: tuple[Edge, ...] | None) -> tuple[int, ...]:
        return self._measure(edges)[0]

    def render_line(self, y: int) -> Strip:
        """One line of the matrix and the edges under it."""
        lines = self._drawn
        if lines is None or self._look != self._current_look():
            lines = self._lines()
        if y < len(lines):
            return lines[y][1]
        return Strip.blank(self.size.width, self.visual_style.rich_style)

    def _current_look(self) -> tuple[int, Style, str]:
        """What every line depends on: the width, the widget's style, the edges' colour."""
        colour = self.app.theme_variables.get("traffic-edge", "")
        return (self.size.width, self.visual_style.rich_style, colour)

    def _lines(self) -> list[tuple[object, Strip]]:
        """Every line of the picture, each with what it shows (its key), drawn again
        only where no line showing the same is kept."""
        look = self._current_look()
        width, base, colour = look
        if look != self._look:
            self._look, self._kept = look, {}
        elif len(self._kept) > KEPT_LINES:
            self._kept.clear()
        lines: list[tuple[object, Strip]] = []
        for key, draw in self._blocks(width, colour):
            strips = self._kept.get(key)
            if strips is None:
                strips = self._kept[key] = [Strip(line) for line in _styled(draw(), base, width)]
            lines.extend(((key, n), strip) for n, strip in enumerate(strips))
        self._drawn = lines
        return lines

    def _blocks(
        self, width: int, colour: str
    ) -> list[tuple[object, Callable[[], Iterable[Segment]]]]:
        """The picture as blocks of lines, each with what it shows and how to draw it."""
        console = self.app.console
        options = self.app.console_options.update(highlight=False, width=width, height=None)
        edges = self.snapshot.traffic if self.snapshot else ()
        if not edges:
            empty = Text("No messages yet.", style="dim")
            return [("empty", lambda: console.render(empty, options))]
        names = self._measure(edges)[1]
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
        blocks: list[tuple[object, Callable[[], Iterable[Segment]]]] = []
        widths = grid.natural_widths(width)
        shrunk = self._shrunk.widths(grid, console, options) if widths is None else None
        if shrunk is not None and shrunk[0] <= 1:  # a sliver: Rich's table, as it is
            if self._matrix is None or self._matrix.grid != grid:
                self._matrix = KeptMatrix(grid)
            matrix = self._matrix
            blocks.append((("matrix", grid), lambda: console.render(matrix, options)))
        elif shrunk is not None:  # too narrow: Rich shrinks the columns; cells by Rich
            header = partial(self._shrunk.header, grid, shrunk, console, options)
            blocks.append((("shrunk header", grid.columns, shrunk), header))
            for row in grid.rows:
                drawn = partial(self._shrunk.row, grid, row, shrunk, console, options)
                blocks.append((("shrunk row", row, shrunk, colour), drawn))
        elif widths is not None:
            blocks.append((("header", grid.columns, widths), lambda: grid.header(widths)))
            for row in grid.rows:
                blocks.append((("row", row, widths, colour), partial(grid.row, row, widths)))
        gap = Text("")
        blocks.append(("gap", lambda: console.render(gap, options)))
        for edge in edges[:TOP_EDGES]:
            length = max(1, round(edge.count / most * BAR))
            edge_line = partial(_edge_line, edge, length, colour, console, options)
            blocks.append((("edge", edge, length, colour), edge_line))
        return blocks


@dataclass(frozen=True)
class Grid:
    """What the matrix shows: the column labels, each row's label and shades, the colour
    of traffic."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    colour: str

    def natural_widths(self, width: int) -> tuple[int, ...] | None:
        """Each column's width as Rich's table gives it when the matrix fits ``width``
        at its natural widths (the label column, then one per name); None when it does
        not (Rich then shrinks the columns: ``KeptMatrix`` draws it)."""
        if not self.columns or any(cell_len(label) == 0 for label in self.columns):
            return None
        first = max(cell_len(CORNER), *(cell_len(label) for label, _ in self.rows))
        widths = (first, *(cell_len(label) for label in self.columns))
        if sum(widths) + 2 * len(self.columns) > width:
            return None
        return widths

    def header(self, widths: tuple[int, ...]) -> list[Segment]:
        """The header line, as Rich's table draws it at ``widths``."""
        cells = [(label, BOLD) for label in self.columns]
        return _line(Segment(_left(CORNER, widths[0]), BOLD), cells, widths[1:], BOLD)

    def row(self, row: tuple[str, tuple[str, ...]], widths: tuple[int, ...]) -> list[Segment]:
        """A sender's line, as Rich's table draws it at ``widths``."""
        label, shades = row
        colour = Style.parse(self.colour) if self.colour else None
        cells = [(mark, DIM if mark == EMPTY else colour) for mark in shades]
        return _line(Segment(_left(label, widths[0]), BOLD), cells, widths[1:], PLAIN)


def _edge_line(
    edge: Edge, length: int, colour: str, console: Console, options: ConsoleOptions
) -> Iterable[Segment]:
    """An edge under the matrix: sender, a bar as long as its share, recipient, count."""
    line = Text(f"@{edge.sender}"[:10].rjust(10) + " ")
    line.append("━" * length + "▶", style=colour)
    line.append(f" @{edge.recipient}"[:11].ljust(12))
    line.append(f"{edge.count:,}", style="bold")
    return console.render(line, options)


def _left(text: str, width: int) -> str:
    return text + " " * (width - cell_len(text))


def _line(
    first: Segment, cells: Sequence[tuple[str, Style | None]], widths: tuple[int, ...], pad: Style
) -> list[Segment]:
    """A line of the matrix as Rich's table draws it (no box, one cell of padding either
    side but at the edges): the label column, then each cell centred in its column."""
    line = [first, Segment(" ", first.style)]
    last = len(cells) - 1
    for n, ((text, style), width) in enumerate(zip(cells, widths, strict=True)):
        left = (width - cell_len(text)) // 2
        centred = " " * left + text + " " * (width - cell_len(text) - left)
        line += [Segment(" ", pad), Segment(centred, style)]
        if n < last:
            line.append(Segment(" ", pad))
    line.append(Segment.line())
    return line


def _styled(segments: Iterable[Segment], base: Style, width: int) -> list[list[Segment]]:
    """Lines as Textual makes them of a widget's Rich rendering: the widget's style
    under each segment's, cut into lines no wider than the widget (not padded)."""
    if base:
        segments = (Segment(text, base + style, control) for text, style, control in segments)
    return [
        [Segment(text, style) if style else Segment(text) for text, style, _ in line]
        for line in Segment.split_and_crop_lines(
            segments, width, include_new_lines=False, pad=False
        )
    ]


class ShrunkMatrix:
    """A matrix too wide for its natural columns, as Rich's table draws it: the columns'
    widths measured by the table once for each set of labels and width (every shade is
    one cell wide), then each line put together of its cells, each drawn by Rich once
    (a Rich table measures and draws every cell at each drawing)."""

    def __init__(self) -> None:
        self._widths: dict[tuple[object, ...], tuple[int, ...]] = {}
        self._cells: dict[tuple[object, ...], list[Segment]] = {}
        self._measured: dict[tuple[object, ...], tuple[int, int]] = {}
        """Each label's and mark's measurement (narrowest, widest) by width."""

    def widths(self, grid: Grid, console: Console, options: ConsoleOptions) -> tuple[int, ...]:
        """Each column's width with its padding, as the table gives them.

        The table sizes its columns by their measurements alone (each column's narrowest
        and widest cell), so the widths are kept by those: the busiest names change
        order with most messages, and names of one length measure alike."""
        measured = options.update(height=None).update_width(options.max_width)
        key = (options.max_width, self._columns(grid, console, measured))
        found = self._widths.get(key)
        if found is None:
            if len(self._widths) > KEPT_LINES:
                self._widths.clear()
            table = KeptMatrix(grid).table()
            found = self._widths[key] = tuple(table._calculate_column_widths(console, measured))
        return found

    def _columns(
        self, grid: Grid, console: Console, options: ConsoleOptions
    ) -> tuple[tuple[int, int], ...]:
        """Each column's measurement as the table takes it: the narrowest of its cells'
        narrowest, the widest of their widest (the header's included)."""
        first = [self._measure(CORNER, console, options)]
        first += [self._measure(label, console, options) for label, _ in grid.rows]
        columns = [(max(m[0] for m in first), max(m[1] for m in first))]
        for n, label in enumerate(grid.columns):
            cells = [self._measure(label, console, options)]
            marks = {shades[n] for _, shades in grid.rows}
            cells += [self._measure(Text(mark), console, options) for mark in marks]
            columns.append((max(m[0] for m in cells), max(m[1] for m in cells)))
        return tuple(columns)

    def _measure(
        self, cell: str | Text, console: Console, options: ConsoleOptions
    ) -> tuple[int, int]:
        """A cell's measurement as the table takes it (a label's markup read, as the
        table reads it)."""
        key = (type(cell), str(cell), options.max_width)
        found = self._measured.get(key)
        if found is None:
            if len(self._measured) > 4 * KEPT_LINES:
                self._measured.clear()
            measurement = Measurement.get(console, options, cell)
            found = self._measured[key] = (measurement.minimum, measurement.maximum)
        return found

    def header(
        self, grid: Grid, widths: tuple[int, ...], console: Console, options: ConsoleOptions
    ) -> list[Segment]:
        """The header line."""
        style = console.get_style("table.header")
        cells = [(CORNER, CORNER, style), *((label, label, style) for label in grid.columns)]
        return self._line(cells, widths, console, options)

    def row(
        self,
        grid: Grid,
        row: tuple[str, tuple[str, ...]],
        widths: tuple[int, ...],
        console: Console,
        options: ConsoleOptions,
    ) -> list[Segment]:
        """A sender's line."""
        label, shades = row
        plain = console.get_style("")
        cells: list[tuple[object, RenderableType, Style]] = [
            (label, label, console.get_style("bold"))
        ]
        for mark in shades:
            style = "dim" if mark == EMPTY else grid.colour
            cells.append(((mark, style), Text(mark, style=style), plain))
        return self._line(cells, widths, console, options)

    def _line(
        self,
        cells: Sequence[tuple[object, RenderableType, Style]],
        widths: tuple[int, ...],
        console: Console,
        options: ConsoleOptions,
    ) -> list[Segment]:
        """A line of cells, each drawn as the table draws it (``Table._render``)."""
        if len(self._cells) > 4 * KEPT_LINES:
            self._cells.clear()
        table_options = options.update(width=sum(widths), highlight=False, height=None)
        last = len(cells) - 1
        line: list[Segment] = []
        for n, ((what, renderable, style), width) in enumerate(zip(cells, widths, strict=True)):
            padding = (0, 0 if n == last else 1, 0, 0 if n == 0 else 1)
            justify: JustifyMethod = "left" if n == 0 else "center"
            key = (what, style, padding, width, justify)
            segments = self._cells.get(key)
            if segments is None:
                cell_options = table_options.update(
                    width=width,
                    justify=justify,
                    no_wrap=True,
                    overflow="ellipsis",
                    height=None,
                    highlight=False,
                )
                lines = console.render_lines(
                    Padding(renderable, padding), cell_options, style=style
                )
                aligned = Segment.align_top(lines, width, 1, style)  # an empty cell: blank
                segments = self._cells[key] = Segment.set_shape(aligned, width, 1)[0]
            line.extend(segments)
        if sum(widths) > options.max_width:  # cut as the table's lines are
            line = Segment.adjust_line_length(line, options.max_width, pad=False)
        line.append(Segment.line())
        return line


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
        table.add_column(CORNER, style="bold", no_wrap=True)
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
