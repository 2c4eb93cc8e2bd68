"""The flow and the sessions table change only what moved, and still show the room."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.render import measure as real_measure
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from agent_room.core.snapshot import FlowEvent, RoomSnapshot, SessionRow
from agent_room.ui.widgets.flow import FlowTimeline
from agent_room.ui.widgets.sessions import SessionsTable
from agent_room.ui.widgets.table import KeptCellsTable

pytestmark = pytest.mark.anyio
T0 = 1_790_000_000.0


def _event(n: int, status: str = "delivered") -> FlowEvent:
    return FlowEvent(
        id=n, at=T0 + n, kind="sent", message_id=n, message_kind="message",
        sender=f"a{n % 5}", recipient=f"a{(n + 1) % 5}", status=status, summary=f"body {n}",
    )  # fmt: skip


class FlowApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FlowTimeline(utc=True, id="flow")


def _shown(flow: FlowTimeline) -> list[tuple[str, str]]:
    """(row key, status) of every row, top to bottom."""
    rows = []
    for row in flow.ordered_rows:
        key = row.key.value
        assert key is not None
        rows.append((key, str(flow.get_cell(key, "status"))))
    return rows


async def test_flow_changes_in_place_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Events added at the end, statuses moving on and the oldest leaving the flow change
    the rows in place (the rows kept keep their cells); an event that comes between
    others has the rows under it drawn again with the cells they had; one that leaves
    from among the rows (the flow keeps the newest events by when they were written and
    shows them by when they happened) takes only its row, no other row added again; the
    flow shown is always the snapshot's events, in order."""
    app = FlowApp()
    async with app.run_test(size=(160, 30)) as pilot:
        flow = app.query_one(FlowTimeline)
        events = tuple(_event(n) for n in range(10))
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=events)
        await pilot.pause()
        kept = flow.get_cell("7", "summary")
        steps = [
            (*events[2:], _event(10, "queued")),  # two left at the top, one added
            (*events[2:], _event(10), _event(11, "queued")),  # a status moved on
            (*events[3:6], _event(6, "failed"), *events[7:], _event(10), _event(11)),
        ]
        for step in steps:
            flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=step)
            await pilot.pause()
            assert _shown(flow) == [(str(e.id), e.status) for e in step]
        assert flow.get_cell("7", "summary") is kept  # changed in place
        before = flow.get_cell("4", "summary")
        between = (*events[3:6], _event(20), *events[6:], _event(10))  # one among those drawn
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=between)
        await pilot.pause()
        assert _shown(flow) == [(str(e.id), e.status) for e in between]
        assert flow.get_cell("4", "summary") is before  # above it: in place
        assert flow.get_cell("7", "summary") is kept  # under it: drawn again, same cells
        added: list[object] = []
        real_add = flow.add_row

        def add_row(*cells: Any, **options: Any) -> Any:
            added.append(options.get("key"))
            return real_add(*cells, **options)

        monkeypatch.setattr(flow, "add_row", add_row)
        left = (*between[:2], *between[3:], _event(21))  # the third left, one came
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=left)
        await pilot.pause()
        assert _shown(flow) == [(str(e.id), e.status) for e in left]
        assert added == ["21"]


async def test_a_full_flow_keeps_its_height_and_the_screen_its_layout() -> None:
    """A flow that moves on by as many events as leave it keeps the table's size, so the
    screen is not laid out again (that draws every panel anew); the rows that moved up
    keep their lines, with their new row for the mouse."""
    app = FlowApp()
    async with app.run_test(size=(160, 30)) as pilot:
        flow = app.query_one(FlowTimeline)
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=tuple(map(_event, range(10))))
        await pilot.pause()
        size = flow.virtual_size
        layouts = []
        refresh = flow.refresh

        def counted(*regions: Region, **options: bool) -> FlowTimeline:
            layouts.append(options.get("layout", False))
            return refresh(*regions, **options)

        flow.refresh = counted  # type: ignore[method-assign]
        column = flow.get_column_index("summary")
        for start in range(1, 30):
            before = flow._render_cell(9, column, flow.rich_style, 20)
            window = tuple(_event(n) for n in range(start, start + 10))
            flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=window)
            await pilot.pause()
            assert _shown(flow) == [(str(e.id), e.status) for e in window]
            assert flow.virtual_size == size
            moved = flow._render_cell(8, column, flow.rich_style, 20)
            assert [[s.text for s in line] for line in moved] == [
                [s.text for s in line] for line in before
            ]
            assert {s.style.meta["row"] for line in moved for s in line if s.style} == {8}
        assert layouts  # the flow was drawn
        assert not any(layouts)


async def test_unchanged_cells_keep_their_rendering() -> None:
    """A new status redraws that cell; the other cells keep the lines drawn before."""
    app = FlowApp()
    async with app.run_test(size=(160, 30)) as pilot:
        flow = app.query_one(FlowTimeline)
        events = tuple(_event(n) for n in range(5))
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=events)
        await pilot.pause()
        before = [flow._render_cell(4, c, flow.rich_style, 10) for c in range(6)]
        changed = (*events[:4], replace(events[4], status="read"))
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=changed)
        await pilot.pause()
        after = [flow._render_cell(4, c, flow.rich_style, 10) for c in range(6)]
        status = flow.get_column_index("status")
        for column, (old, new) in enumerate(zip(before, after, strict=True)):
            assert (old is new) == (column != status)
        assert "read" in "".join(s.text for line in after[status] for s in line)


async def test_cells_and_lines_that_show_the_same_are_drawn_once_each_in_its_own_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cells of new rows that show what a cell drawn before shows, in the same column and
    looks (a status, a route), take its lines, and rows that moved keep their lines,
    each with its own row stamped on for the mouse: the flow, moved on row by row, shows
    segment for segment what a flow drawn at once shows."""
    events = tuple(replace(_event(n), sender="a", recipient="b", summary="same") for n in range(16))
    app, fresh = FlowApp(), FlowApp()
    async with app.run_test(size=(160, 30)) as pilot:
        flow = app.query_one(FlowTimeline)
        drawn = 0
        render = DataTable._render_cell

        def counted(table: DataTable[object], *args: Any, **options: Any) -> Any:
            nonlocal drawn
            drawn += 1
            return render(table, *args, **options)

        for n in range(1, len(events) + 1):
            flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=events[max(0, n - 8) : n])
            await pilot.pause()
            if n == 1:  # the first row's cells are drawn: count the rows after it
                monkeypatch.setattr(DataTable, "_render_cell", counted)
        monkeypatch.undo()
        lines = [list(flow.render_line(y)) for y in range(1, 9)]
        for row, line in enumerate(lines):
            assert {s.style.meta.get("row") for s in line if s.style and s.style.meta} == {row}
    async with fresh.run_test(size=(160, 30)) as pilot:
        other = fresh.query_one(FlowTimeline)
        other.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=events[-8:])
        await pilot.pause()
        assert [list(other.render_line(y)) for y in range(1, 9)] == lines
    assert drawn <= 2 * (len(events) - 1)  # the times: one new a row, drawn once a look


class SessionsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionsTable(id="sessions")


def _session(n: int, state: str = "idle") -> SessionRow:
    return SessionRow(
        name=f"agent{n:02d}", session_id=f"s{n}", agent="claude", state=state, cwd="/w",
        pane=f"%{n}", tmux_socket="/tmp/s", pid=100 + n, started_at=T0 - 60,
    )  # fmt: skip


async def test_sessions_change_only_the_cells_that_moved() -> None:
    """A session's new state replaces that cell; every other cell keeps its value object
    (and so its rendering), and the cursor stays on its session."""
    app = SessionsApp()
    async with app.run_test(size=(160, 30)) as pilot:
        table = app.query_one(SessionsTable)
        rows = tuple(_session(n) for n in range(5))
        table.snapshot = RoomSnapshot(taken_at=T0, home="/h", sessions=rows)
        await pilot.pause()
        table.select_name("agent03")
        before = {
            (r, c): table.get_cell_at(Coordinate(r, c))
            for r in range(5)
            for c in range(len(table.columns))
        }
        moved = (*rows[:2], replace(rows[2], state="working"), *rows[3:])
        table.snapshot = RoomSnapshot(taken_at=T0, home="/h", sessions=moved)
        await pilot.pause()
        state = table.get_column_index("state")
        for (r, c), old in before.items():
            new = table.get_cell_at(Coordinate(r, c))
            assert (new is old) == ((r, c) != (2, state)), (r, c)
        assert "working" in str(table.get_cell_at(Coordinate(2, state)))
        assert table.selected is not None
        assert table.selected.name == "agent03"


class TablesApp(App[None]):
    def compose(self) -> ComposeResult:
        yield KeptCellsTable(id="given")
        yield KeptCellsTable(id="measured")


async def test_rows_added_are_measured_only_where_a_column_takes_its_cells_width(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A table whose columns are all given widths does not measure the cells of the rows
    added (the flow adds one an event); a column sized by its cells still grows to them,
    and a row of automatic height still gets the height of its tallest cell."""
    measured: list[object] = []

    def measure(console: Any, renderable: Any, default: int, **options: Any) -> int:
        measured.append(renderable)
        return real_measure(console, renderable, default, **options)

    monkeypatch.setattr("textual.widgets._data_table.measure", measure)
    app = TablesApp()
    async with app.run_test(size=(120, 30)) as pilot:
        given = app.query_one("#given", KeptCellsTable)
        given.add_column("A", key="a", width=6)
        given.add_column("B", key="b", width=10)
        await pilot.pause()
        measured.clear()
        for n in range(5):
            given.add_row(f"a{n}", f"b{n}", key=str(n))
        await pilot.pause()
        assert measured == []
        assert given.virtual_size.height == 6  # the header and five rows
        tall = given.add_row("x\ny", "z", key="tall", height=None)
        await pilot.pause()
        assert given.rows[tall].height == 2
        table = app.query_one("#measured", KeptCellsTable)
        table.add_column("Grows", key="grows")
        table.add_row("a much longer cell than its label")
        await pilot.pause()
        assert table.columns[ColumnKey("grows")].content_width == len(
            "a much longer cell than its label"
        )
