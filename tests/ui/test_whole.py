"""What the console shows is whole where it can be: the ``?`` help in the smallest
terminal it supports (80x24), names, agents and statuses at 120x35."""

from __future__ import annotations

import pytest

from agent_room.room.service import Room
from agent_room.ui.widgets.flow import FlowTimeline
from agent_room.ui.widgets.sessions import SessionsTable
from tests.ui.conftest import settle_queue, still_app
from tests.ui.seed import FrozenClock

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_the_help_fits_the_terminal(
    seeded: tuple[Room, FrozenClock], size: tuple[int, int]
) -> None:
    room, clock = seeded
    app = still_app(room, clock)
    async with app.run_test(size=size) as pilot:
        await settle_queue(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one("#help")
        assert box.region.x >= 0
        assert box.region.right <= size[0]
        assert box.region.bottom <= size[1]
        # no line of the help is wider than the box shows: nothing cut at the right
        assert box.virtual_size.width <= box.scrollable_content_region.width
        assert not box.show_horizontal_scrollbar


@pytest.mark.parametrize("size", [(120, 35), (160, 48)])
async def test_names_agents_and_statuses_are_whole(
    seeded: tuple[Room, FrozenClock], size: tuple[int, int]
) -> None:
    """At 120x35 the sessions show every name and agent in full, and the flow every
    status ("delivered" is the longest), however narrow the flow's panel."""
    room, clock = seeded
    app = still_app(room, clock)
    async with app.run_test(size=size) as pilot:
        await settle_queue(pilot)
        table = app.screen.query_one("#sessions", SessionsTable)
        widths = {str(key.value): column.width for key, column in table.columns.items()}
        assert widths["name"] >= len("    @reviewer")
        assert widths["agent"] >= len("claude")
        flow = app.screen.query_one("#flow", FlowTimeline)
        status = next(c for c in flow.columns if c.key == "status")
        assert status.width >= len("delivered")
