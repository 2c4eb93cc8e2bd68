"""``KeptCellsTable``: a ``DataTable`` that keeps each cell's rendering until it changes.

Textual's table keys the renderings it caches by a count of every change made to it, so
replacing one cell or adding one row draws every visible cell again through Rich: in a
room where agents talk, that was most of the console's CPU (a new picture of the room
arrives several times a second, each changing a row or two). This table keeps a cell's
lines for as long as the cell holds the same value object in the same row and column,
style and width; ``update_cell`` puts a new object there, so only changed cells are
drawn again. Textual bakes a cell's row and column index into its lines (for the mouse):
a kept cell whose row moved gets its lines with the new index stamped on, which costs a
fraction of drawing it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import DataTable
from textual.widgets.data_table import (
    CellDoesNotExist,
    ColumnKey,
    RowKey,
)

KEPT_CELLS = 4096
"""Cell renderings kept: a few screenfuls of a wide table, in each state of the cursor."""

Lines = list[list[Segment]]
"""A cell's lines of segments, as Textual's table renders them."""


class KeptCellsTable(DataTable[object]):
    """A table that draws again only the cells that changed (see the module's note)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._kept: LRUCache[tuple[Any, ...], tuple[object, int, Lines]] = LRUCache(KEPT_CELLS)
        """(value, row index, lines) of each cell drawn, by its key, column and looks."""
        self._shared: LRUCache[tuple[Any, ...], tuple[int, Lines]] = LRUCache(KEPT_CELLS)
        """(row index, lines) of a cell drawn, by what it shows, its column and looks: a
        new cell showing the same as one drawn before takes its lines."""
        self._frame: tuple[Style, int] | None = None
        """While the table's lines are drawn: its style and the height of its fixed rows
        (header included), the same for every line of one drawing."""

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: object,
        *,
        update_width: bool = False,
    ) -> None:
        """Replace a cell, drawing its row again (Textual's draws the whole table)."""
        if update_width:
            super().update_cell(row_key, column_key, value, update_width=True)
            return
        row_key = RowKey(row_key) if isinstance(row_key, str) else row_key
        column_key = ColumnKey(column_key) if isinstance(column_key, str) else column_key
        row_index = self._row_locations.get(row_key)
        if row_index is None or column_key not in self._column_locations:
            raise CellDoesNotExist(f"No cell at row {row_key.value!r}, column {column_key.value!r}")
        self._data[row_key][column_key] = value
        self._update_count += 1
        self.refresh_row(row_index)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        """The table's size after rows were added, without measuring the new rows' cells
        where no column takes its width from its cells (each of ours is given its width):
        Textual measures every cell of every new row through Rich, a cost paid at each
        event the flow adds, for widths it then does not use. A row with a label or an
        automatic height is still measured."""
        if not self._labelled_row_exists and not any(
            column.auto_width for column in self.columns.values()
        ):
            new_rows = [
                key
                for key in new_rows
                if (row := self.rows.get(key)) is not None
                and (row.label is not None or row.auto_height)
            ]
        super()._update_dimensions(new_rows)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines asked for, with the table's style and the height of its fixed rows
        found once for all of them (Textual's table finds them again for each line, and
        its style walks up every ancestor)."""
        fixed = 0
        for index in range(self.fixed_rows):
            key = self._row_locations.get_key(index)
            if key is not None:
                fixed += self.get_row_height(key)
        if self.show_header:
            fixed += self.get_row_height(self._header_row_key)
        self._frame = (self.rich_style, fixed)
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        """A line of the table, as Textual's table draws it (with the frame's style)."""
        frame = self._frame
        if frame is None:
            return super().render_line(y)
        base_style, fixed = frame
        scroll_x, scroll_y = self.scroll_offset
        if y >= fixed:
            y += scroll_y
        return self._render_line(y, scroll_x, scroll_x + self.size.width, base_style)

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Lines:
        """A cell's lines (the header's too), kept while its value, place, style and
        width stay."""
        column_key = self._column_locations.get_key(column_index)
        header = row_index == -1
        row_key = self._header_row_key if header else self._row_locations.get_key(row_index)
        if row_key is None or column_key is None:  # row labels: none of ours has them
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        value = self.columns[column_key].label if header else self._data[row_key].get(column_key)
        key = (
            row_key,
            column_key,
            column_index,
            row_index < self.fixed_rows,  # the fixed rows' style
            base_style,
            width,
            cursor,
            hover,
            self.show_cursor,
            self._show_hover_cursor,
            self._pseudo_class_state,
        )
        kept = self._kept.get(key)
        if kept is not None and kept[0] is value:
            if kept[1] == row_index:
                return kept[2]
            lines = _moved(kept[2], row_index, column_index)
        else:
            looks = (header, self.app.theme, *key[1:])  # by content: the theme too
            like = self._drawn_like(value, looks, row_index, column_index)
            if like is None:
                like = super()._render_cell(
                    row_index, column_index, base_style, width, cursor, hover
                )
                self._shared_set(value, looks, row_index, like)
            lines = like
        self._kept.discard(key)  # ``set`` leaves a key's old value in place
        self._kept.set(key, (value, row_index, lines))
        return lines

    def _drawn_like(
        self, value: object, looks: tuple[Any, ...], row_index: int, column_index: int
    ) -> Lines | None:
        """The lines of a cell of another row that shows the same in the same column and
        looks (a flow's status, route or message repeats from row to row), with this
        cell's place stamped on; None if there is none."""
        content = _content(value)
        if content is None:
            return None
        shared = self._shared.get((content, looks))
        if shared is None:
            return None
        drawn_at, lines = shared
        return lines if drawn_at == row_index else _moved(lines, row_index, column_index)

    def _shared_set(
        self, value: object, looks: tuple[Any, ...], row_index: int, lines: Lines
    ) -> None:
        content = _content(value)
        if content is not None:
            self._shared.set((content, looks), (row_index, lines))


def _content(value: object) -> tuple[object, ...] | None:
    """What a cell shows, as a key: its text, styles and how it is laid out (None for a
    value other than text)."""
    if isinstance(value, str):
        return ("str", value)
    if type(value) is Text:
        return (
            value.plain,
            value.style,
            tuple(value.spans),
            value.justify,
            value.overflow,
            value.no_wrap,
            value.end,
            value.tab_size,
        )
    return None


@lru_cache(maxsize=KEPT_CELLS)
def _place(row_index: int, column_index: int) -> Style:
    """The meta of a cell's place, one object for each (Rich caches the sums of styles
    by the objects added)."""
    return Style.from_meta({"row": row_index, "column": column_index})


def _moved(lines: Lines, row_index: int, column_index: int) -> Lines:
    """A cell's lines with its new place as their meta (the later meta wins a merge)."""
    place = _place(row_index, column_index)
    return [
        [Segment(text, style + place if style else style, control) for text, style, control in line]
        for line in lines
    ]
