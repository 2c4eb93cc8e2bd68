"""The flow and the sessions table change only what moved, and still show the room."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.geometry import Region
from textual.render import measure as real_measure
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


def _texts(flow: FlowTimeline) -> list[str]:
    """The flow's lines on screen below the header, as text."""
    return [flow.render_line(y).text.rstrip() for y in range(1, flow.size.height)]


def _drawn(monkeypatch: pytest.MonkeyPatch, flow: FlowTimeline) -> list[str]:
    """The lines the flow draws from now on (a kept line is not drawn again)."""
    drawn: list[str] = []
    draw = flow._line

    def counted(*args: Any) -> Any:
        line = draw(*args)
        drawn.append(line.text.split()[0] if line.text.strip() else "")
        return line

    monkeypatch.setattr(flow, "_line", counted)
    return drawn


async def test_the_flow_shows_the_snapshots_events_in_order_as_a_fresh_flow_does() -> None:
    """Events added at the end, statuses moving on, the oldest leaving, one leaving from
    among the others (the reader keeps the newest events by when they were written and
    shows them by when they happened), one coming between: after each picture the flow
    shows, segment for segment, what a flow given only that picture shows."""
    events = tuple(_event(n) for n in range(10))
    steps = [
        events,
        (*events[1:], _event(10)),
        (*events[1:4], replace(events[4], status="read"), *events[5:], _event(10)),
        (*events[2:6], *events[7:], _event(10), _event(11)),
        (*events[2:6], replace(_event(30), at=T0 + 6.5), *events[7:], _event(10), _event(11)),
    ]
    app, fresh = FlowApp(), FlowApp()
    seen = []
    async with app.run_test(size=(160, 30)) as pilot:
        flow = app.query_one(FlowTimeline)
        for step in steps:
            flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=step)
            await pilot.pause()
            assert flow.events == step
            seen.append([list(flow.render_line(y)) for y in range(flow.size.height)])
    async with fresh.run_test(size=(160, 30)) as pilot:
        other = fresh.query_one(FlowTimeline)
        for step, lines in zip(steps, seen, strict=True):
            other.snapshot = None
            await pilot.pause()
            other.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=step)
            await pilot.pause()
            assert [list(other.render_line(y)) for y in range(other.size.height)] == lines
    texts = [" ".join(line.split()) for line in ("".join(s.text for s in row) for row in seen[-1])]
    assert texts[1] == "14:13:22 → message sent @a2 → @a3 delivered body 2"
    assert [text.split()[-1] for text in texts[1:11]] == [
        "2", "3", "4", "5", "30", "7", "8", "9", "10", "11"
    ]  # fmt: skip


async def test_a_picture_draws_only_the_lines_of_new_or_changed_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full flow moved on by one event draws that event's line alone (the others scroll
    past as they were drawn), keeps its size, and lays nothing out again; an event whose
    status moved on has its line drawn again, and that one only."""
    app = FlowApp()
    async with app.run_test(size=(160, 14)) as pilot:
        flow = app.query_one(FlowTimeline)
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=tuple(map(_event, range(20))))
        await pilot.pause()
        await pilot.pause()  # the scrollbar came: the message column is narrower
        size = flow.virtual_size
        layouts = []
        refresh = flow.refresh

        def counted(*regions: Region, **options: bool) -> FlowTimeline:
            layouts.append(options.get("layout", False))
            return refresh(*regions, **options)

        flow.refresh = counted  # type: ignore[method-assign]
        drawn = _drawn(monkeypatch, flow)
        for start in range(1, 12):
            window = tuple(_event(n) for n in range(start, start + 20))
            flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=window)
            await pilot.pause()
            assert flow.virtual_size == size
            assert _texts(flow)[-1].split()[-1] == str(start + 19)  # the newest in sight
        assert len(drawn) == 11  # one line a picture
        assert layouts
        assert not any(layouts)
        drawn.clear()
        last = flow.events
        moved = (*last[:-3], replace(last[-3], status="read"), *last[-2:])
        flow.snapshot = RoomSnapshot(taken_at=T0, home="/h", flow=moved)
        await pilot.pause()
        assert len(drawn) == 1
        assert "read" in _texts(flow)[-3].split()


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
