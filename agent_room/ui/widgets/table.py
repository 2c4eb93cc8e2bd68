"""``KeptCellsTable``: a ``DataTable`` that keeps each cell's rendering until it changes.

Textual's table keys the renderings it caches by a count of every change made to it, so
replacing one cell, adding or removing one row draws every visible cell again through
Rich: in a room where agents talk, that was most of the console's CPU (a new picture of
the room arrives several times a second, each changing a row or two). This table keeps a
cell's lines for as long as the cell holds the same value object at the same place, in
the same style and width; ``update_cell`` puts a new object there, so only changed cells
are drawn again. The row and column indexes are part of the key because Textual bakes
them into the lines (for the mouse).
"""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowKey

KEPT_CELLS = 4096
"""Cell renderings kept: a few screenfuls of a wide table, in each state of the cursor."""

Lines = list[list[Segment]]
"""A cell's lines of segments, as Textual's table renders them."""


class KeptCellsTable(DataTable[object]):
    """A table that draws again only the cells that changed (see the module's note)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._kept: LRUCache[tuple[Any, ...], tuple[object, Lines]] = LRUCache(KEPT_CELLS)

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

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Lines:
        """A body cell's lines, kept while its value, place, style and width stay."""
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        if row_key is None or column_key is None:  # the header and row labels: rare
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        value = self._data[row_key].get(column_key)
        key = (
            row_key,
            column_key,
            row_index,
            column_index,
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
            return kept[1]
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        self._kept.discard(key)  # ``set`` leaves a key's old value in place
        self._kept.set(key, (value, lines))
        return lines
