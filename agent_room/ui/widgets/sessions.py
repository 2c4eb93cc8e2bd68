"""``SessionsTable``: every session in the room, one row each, filtered and sorted.

Draws the ``sessions`` of the snapshot it is bound to with the columns of
``ui.columns``; it knows nothing of the store. The cursor stays on the same session
across redraws.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.reactive import reactive, var

from agent_room.core.snapshot import RoomSnapshot, SessionRow
from agent_room.ui.columns import (
    COLUMNS,
    SORT_KEYS,
    CellContext,
    Column,
    age,
    cell_lengths,
    fit_widths,
    natural_widths,
    visible,
)
from agent_room.ui.widgets.table import KeptCellsTable

FIRST_ROWS = 100
"""Rows drawn before the first frame; the rest just after it. Only about a screenful is
visible, and a table measures every row it is given: a room of thousands of sessions
then paints as soon as one of a hundred."""


class SessionsTable(KeptCellsTable):
    """The sessions of the room."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column"),
        Binding("S", "reverse_sort", "Reverse", show=False),
    ]

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""
    filter_text: reactive[str] = reactive("")
    """The filter typed after ``/``."""
    sort_key: reactive[str | None] = reactive(None)
    """The column sorted by; ``None`` keeps the room's order (oldest first)."""
    reverse: reactive[bool] = reactive(False)
    """Sort descending."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.shown: list[SessionRow] = []
        """The rows on screen, in order."""
        self._drawn: tuple[tuple[SessionRow, ...], tuple[str, ...]] | None = None
        """The rows and their ages as last drawn."""
        self._widths: dict[str, int] = {}
        """The columns' widths as last fitted to the window and the content."""
        self._later: tuple[list[SessionRow], CellContext] | None = None
        """Rows of the last full draw still to be added (see ``FIRST_ROWS``)."""
        self._title = ""
        """The border title as last set."""
        self._fitted_to = -1
        """The width the columns were last fitted to on a resize."""
        self._lengths: dict[tuple[SessionRow, str], Mapping[str, int]] = {}
        """Each row's cell lengths as last measured, by the row and its age: a new
        picture measures only the rows that changed."""

    def on_mount(self) -> None:
        """Columns come from ``ui.columns``, sized when the rows are drawn."""
        self.watch(self.app, "theme", lambda _theme: self.redraw(force=True), init=False)

    def on_resize(self) -> None:
        """Fit the columns to a new width (a resize also comes when rows are added or
        removed: the table's virtual size changed; that draws nothing again)."""
        width = self.scrollable_content_region.width
        if width != self._fitted_to:
            self._fitted_to = width
            self.redraw(force=True)

    def watch_snapshot(self) -> None:
        """A new room picture."""
        self.redraw()

    def watch_filter_text(self) -> None:
        """The filter changed."""
        self.redraw()

    def watch_sort_key(self) -> None:
        """The sort column changed."""
        self.redraw()

    def watch_reverse(self) -> None:
        """The sort direction changed."""
        self.redraw()

    def action_cycle_sort(self) -> None:
        """Sort by the next column (after the last: the room's order)."""
        keys: list[str | None] = [None, *SORT_KEYS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.notify(f"Sorted by {self.sort_key or 'start time'}", timeout=2)

    def action_reverse_sort(self) -> None:
        """Flip the sort direction."""
        self.reverse = not self.reverse

    @property
    def selected(self) -> SessionRow | None:
        """The session under the cursor."""
        if not self.shown or not 0 <= self.cursor_row < len(self.shown):
            return None
        return self.shown[self.cursor_row]

    def select_name(self, name: str) -> bool:
        """Put the cursor on ``name``; False if it is not shown."""
        for index, row in enumerate(self.shown):
            if row.name == name:
                if index >= self.row_count:  # not drawn yet: draw the rest now
                    self._add_later()
                self.move_cursor(row=index)
                return True
        return False

    def redraw(self, *, force: bool = False) -> None:
        """Draw the snapshot's rows, keeping the cursor on its session.

        Skipped when nothing shown would change (the same rows, ages, filter and order):
        a new snapshot arrives on every room change, most of which are elsewhere. When the
        same sessions stay in the same order, only the changed rows' cells are replaced.
        """
        if not self.is_mounted:
            return
        snapshot = self.snapshot
        if snapshot is None:
            self.clear()
            self.shown = []
            self._drawn = None
            return
        shown = visible(
            snapshot.sessions, query=self.filter_text, sort=self.sort_key, reverse=self.reverse
        )
        ctx = CellContext(now=snapshot.taken_at, colours=self.app.theme_variables)
        ages = tuple(age(ctx.now - row.started_at) for row in shown)
        drawn = (tuple(shown), ages)
        self._retitle(len(snapshot.sessions))  # a new filter or order shows at once
        if drawn == self._drawn and not force:
            return
        kept: dict[tuple[SessionRow, str], Mapping[str, int]] = {}

        def lengths(row: SessionRow) -> Mapping[str, int]:
            key = (row, age(ctx.now - row.started_at))
            found = self._lengths.get(key)
            kept[key] = found = cell_lengths(row, ctx) if found is None else found
            return found

        natural = natural_widths(shown, ctx, lengths)
        self._lengths = kept
        widths = fit_widths(
            natural,
            self.scrollable_content_region.width,
            padding=2 * self.cell_padding,
        )
        ctx = CellContext(now=ctx.now, colours=ctx.colours, widths=widths)
        refit = widths != self._widths
        force = force or refit
        previous = self._drawn
        self._drawn = drawn
        if not force and previous and [r.name for r in previous[0]] == [r.name for r in shown]:
            # the same sessions in the same order (a state, a count or an age moved on):
            # change the cells that differ; the table keeps its size, so only it redraws
            self._add_later()
            self.shown = shown
            self._update_rows(previous, drawn, ctx)
        else:
            current = self.selected.name if self.selected else None
            self.clear(columns=refit)
            self._later = None
            if refit:
                self._widths = widths
                for col in self._shown_columns():
                    self.add_column(col.label, key=col.key, width=widths[col.key])
            self.shown = shown
            self._add_rows(shown[:FIRST_ROWS], ctx)
            if len(shown) > FIRST_ROWS:
                self._later = (shown[FIRST_ROWS:], ctx)
                self.call_after_refresh(self._add_later)
            if current is not None:
                self.select_name(current)
        self._retitle(len(snapshot.sessions))

    def _update_rows(
        self,
        previous: tuple[tuple[SessionRow, ...], tuple[str, ...]],
        drawn: tuple[tuple[SessionRow, ...], tuple[str, ...]],
        ctx: CellContext,
    ) -> None:
        """Replace the cells that changed of the same sessions in the same order: each
        redraws its row only, the others keep their rendering."""
        for old, old_age, new, new_age in zip(*previous, *drawn, strict=True):
            if (old, old_age) != (new, new_age):
                for col in self._shown_columns():
                    cell = col.cell(new, ctx)
                    if cell != self.get_cell(new.name, col.key):
                        self.update_cell(new.name, col.key, cell)

    def _add_rows(self, rows: list[SessionRow], ctx: CellContext) -> None:
        columns = self._shown_columns()
        for row in rows:
            self.add_row(*(col.cell(row, ctx) for col in columns), key=row.name)

    def _add_later(self) -> None:
        """Add the rows a full draw left for after its frame (at once if asked first)."""
        later, self._later = self._later, None
        if later is not None:
            self._add_rows(*later)

    def _shown_columns(self) -> list[Column]:
        """The columns that fit the window (a narrow one leaves some out)."""
        return [col for col in COLUMNS if col.key in self._widths]

    def _retitle(self, total: int) -> None:
        """The title: how many are shown of how many, the filter and the order."""
        shown = len(
            visible(self.snapshot.sessions, query=self.filter_text) if self.snapshot else ()
        )
        sort = f" · by {self.sort_key}{' ↓' if self.reverse else ''}" if self.sort_key else ""
        query = f" · filter “{self.filter_text}”" if self.filter_text else ""
        title = f"Sessions {shown}/{total}{query}{sort}"
        if title != self._title:  # setting a title draws the whole table again
            self.border_title = self._title = title
