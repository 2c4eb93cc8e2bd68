"""What the agents spent, in the console: the sessions table's ``Today`` column (with a
spent budget marked), ``$`` opens the usage screen (a plot over time and a table that
``b`` sums by agent, model, link or day and ``t`` spans today or 14 days), Esc returns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rich.text import Text
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual_plotext import PlotextPlot

from agent_room.core.usage import Record, Tokens
from agent_room.core.usage_records import Client
from agent_room.room.budgets import Budgets
from agent_room.room.service import Room
from agent_room.room.usage import Usage
from agent_room.room.usage_report import Reports, usage_view
from agent_room.store import usage as store_usage
from agent_room.store.usage import Priced
from agent_room.ui.app import RoomConsole
from agent_room.ui.screens.main import MainScreen
from agent_room.ui.screens.usage import UsageScreen
from tests.ui.conftest import select_session, settle_queue, still_app, until
from tests.ui.seed import T0, FrozenClock

SIZE = (160, 48)
SnapCompare = Callable[..., bool]


def spend(room: Room) -> None:
    """Requests of @backend (two models) and @frontend on the seeded day, one unpriced."""
    made = [
        ("sess-backend", "backend", "claude-opus-4-6", Tokens(2000, 900, 40000, 3000), 600.0),
        ("sess-backend", "backend", "claude-haiku-4-5", Tokens(500, 300, 9000, 0), 4200.0),
        ("sess-frontend", "frontend", "claude-opus-4-6", Tokens(1200, 400, 30000, 0), 7300.0),
        ("sess-frontend", "frontend", "house-model", Tokens(100, 50, 0, 0), 7400.0),
    ]
    prices = Usage(room).prices()
    for n, (session, name, model, tokens, after) in enumerate(made):
        record = Record(f"m{n}", Client.CLAUDE, model, tokens, T0 + after)
        cost = prices.cost(model, tokens, T0 + after)
        store_usage.save(room.store, session, [Priced(record, name, cost)], at=T0 + after)


def _cell(table: DataTable[object], row: int, column: str) -> str:
    value = table.get_cell_at(Coordinate(row, table.get_column_index(column)))
    return value.plain if isinstance(value, Text) else str(value)


async def _view(pilot: Pilot[int]) -> UsageScreen:
    await until(pilot, lambda: isinstance(pilot.app.screen, UsageScreen))
    screen = pilot.app.screen
    assert isinstance(screen, UsageScreen)
    await until(pilot, lambda: screen.view is not None)
    return screen


@pytest.mark.anyio
async def test_the_sessions_table_shows_todays_cost_and_a_spent_budget(
    seeded: tuple[Room, FrozenClock],
) -> None:
    room, clock = seeded
    clock.now = T0 + 8000
    spend(room)
    Budgets(room).set("frontend", 0.01)
    costs = Reports(room).costs_today()
    app = still_app(room, clock)
    async with app.run_test(size=SIZE) as pilot:
        table = await select_session(pilot, "backend")
        names = [row.name for row in table.shown]
        today = {name: _cell(table, i, "cost") for i, name in enumerate(names)}
    assert today["backend"] == f"${costs['backend'][0]:.2f}"
    assert today["frontend"] == f"${costs['frontend'][0]:.2f}+ over"  # part unpriced, held
    assert today["api"] == "·"  # nothing read of it


@pytest.mark.anyio
async def test_dollar_opens_the_usage_screen_and_b_t_escape_work(
    console: Callable[..., RoomConsole], seeded: tuple[Room, FrozenClock]
) -> None:
    room, clock = seeded
    clock.now = T0 + 8000
    spend(room)
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "backend")
        await pilot.press("dollar_sign")
        screen = await _view(pilot)
        view = screen.view
        assert view is not None
        assert (view.span, view.by) == ("today", "agent")
        assert [line.key for line in view.lines] == ["backend", "frontend"]
        assert len(view.series) == 24  # today by the hour
        assert view.series[0][1] > 0  # 00:10 UTC: @backend's first request
        table = screen.query_one("#usage-table", DataTable)
        assert table.row_count == 3  # two agents and the total
        assert _cell(table, 2, "AGENT") == "total"
        assert _cell(table, 1, "COST").endswith("+")  # part of @frontend's cost unknown
        assert screen.query_one("#usage-plot", PlotextPlot).plt is not None

        await pilot.press("b")
        await until(pilot, lambda: screen.view is not None and screen.view.by == "model")
        keys = [line.key for line in screen.view.lines]  # type: ignore[union-attr]
        assert keys == ["claude-haiku-4-5", "claude-opus-4-6", "house-model"]
        await pilot.press("t")
        await until(pilot, lambda: screen.view is not None and screen.view.span == "14 days")
        assert len(screen.view.series) == 14  # type: ignore[union-attr]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))


def test_usage_screen(
    snap_compare: SnapCompare, seeded: tuple[Room, FrozenClock], room_home: Path
) -> None:
    """160x48, dark theme, the seeded room's day at 02:13 UTC: the header "Usage" with
    "today · by agent" and the day's total (with a "+": part of it is unpriced); a bar
    plot "Cost per hour (UTC) · today" with bars at hours 00, 01 and 02 (the highest at
    00) over 24 hours; a table with @backend and @frontend, their requests, tokens (cut
    to k) and costs, @frontend's ending in "+", and a total row; below it the line
    "@frontend is over its budget: the room holds its prompts until the operator raises
    it"; the footer's keys Back, By… and Span."""
    room, clock = seeded
    clock.now = T0 + 8000
    spend(room)
    Budgets(room).set("frontend", 0.01)
    view = usage_view(room, span="today", by="agent")

    async def open_usage(pilot: Pilot[int]) -> None:
        await settle_queue(pilot)
        await pilot.app.push_screen(UsageScreen(lambda _span, _by: view))
        await _view(pilot)
        await pilot.pause()

    app = still_app(room, clock)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_usage)
