"""The console in any terminal: 80x24 (compact: every session and the handovers),
120x35 and 250x60 (columns sized to the content and the window), in every shipped theme,
never a sideways scrollbar; panel titles that say what is shown."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widget import Widget

from agent_room.room.enter import Where
from agent_room.room.service import Room
from agent_room.ui.app import make_app
from agent_room.ui.widgets.flow import FlowTimeline
from agent_room.ui.widgets.handovers import HandoverQueue
from agent_room.ui.widgets.sessions import SessionsTable
from tests.fakes import FakeMux
from tests.ui.conftest import THEMES, settle_queue, still_app, still_snapshot
from tests.ui.seed import AliveProbe, FrozenClock

SnapCompare = Callable[..., bool]
pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (120, 35), (250, 60)]


def _fits(table: Widget) -> bool:
    """No sideways scrolling: the columns end within the table."""
    return (
        not table.show_horizontal_scrollbar
        and table.virtual_size.width <= table.scrollable_content_region.width
    )


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_console_pictures(
    snap_compare: SnapCompare,
    seeded: tuple[Room, FrozenClock],
    size: tuple[int, int],
    theme: str,
) -> None:
    """The seeded room at each size in each shipped theme. Must show all six sessions
    (@backend to @ops) and "Handovers 2 pending" with #7 and #8 (highlighted, its
    cycle warning over the preview) in every picture, no
    sideways scrollbar under any table, and borders visible on the theme's background.
    80x24 is compact: sessions full width over the handovers (no tree, flow or matrix);
    120x35 shows every panel with the message column readable; 250x60 the sessions'
    full cwd (/srv/shop/...) and the table filling its panel."""
    room, clock = seeded
    assert snap_compare(still_app(room, clock, theme), terminal_size=size, run_before=settle_queue)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_every_session_and_handover_is_in_view_without_sideways_scrolling(
    seeded: tuple[Room, FrozenClock], size: tuple[int, int]
) -> None:
    room, clock = seeded
    app = still_app(room, clock)
    async with app.run_test(size=size) as pilot:
        await settle_queue(pilot)
        table = app.screen.query_one("#sessions", SessionsTable)
        total = len(app.snapshot.sessions) if app.snapshot else 0
        assert total == 6
        assert table.row_count == total
        # the header row and every session fit in the panel: nothing to scroll to
        assert table.scrollable_content_region.height >= total + 1
        assert _fits(table)
        queue = app.screen.query_one("#queue", HandoverQueue)
        assert queue.display
        assert queue.region.height >= 4
        assert queue.border_title == "Handovers 2 pending"
        flow = app.screen.query_one("#flow", FlowTimeline)
        if size == (80, 24):
            # compact: the flow and the matrix wait for a taller terminal
            assert not app.screen.query_one("#middle").display
        else:
            assert flow.display
            assert _fits(flow)


@pytest.mark.parametrize("width", [120, 250, 400])
async def test_wide_columns_fill_the_panel_and_show_whole_paths(
    seeded: tuple[Room, FrozenClock], width: int
) -> None:
    room, clock = seeded
    app = still_app(room, clock)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle_queue(pilot)
        table = app.screen.query_one("#sessions", SessionsTable)
        widths = {str(key.value): column.width for key, column in table.columns.items()}
        used = sum(widths.values()) + 2 * table.cell_padding * len(widths)
        assert used == table.scrollable_content_region.width  # no empty space, no more
        assert widths["agent"] >= len("claude")
        if width >= 250:
            assert widths["cwd"] >= len("/srv/shop/frontend")
            assert widths["name"] >= len("    @reviewer")


async def test_titles_follow_the_filter_and_the_order_and_an_empty_queue(
    seeded: tuple[Room, FrozenClock],
) -> None:
    room, clock = seeded
    app = still_app(room, clock)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle_queue(pilot)
        table = app.screen.query_one("#sessions", SessionsTable)
        assert table.border_title == "Sessions 6/6"
        table.filter_text = "claude"
        await pilot.pause()
        assert table.border_title == "Sessions 5/6 · filter “claude”"
        table.filter_text = "claud"  # the same rows shown: the title still follows
        await pilot.pause()
        assert table.border_title == "Sessions 5/6 · filter “claud”"
        table.filter_text = ""
        table.sort_key = "name"
        await pilot.pause()
        assert table.border_title == "Sessions 6/6 · by name"
        table.sort_key = None
        await pilot.pause()
        assert table.border_title == "Sessions 6/6"


async def test_an_empty_room_titles_the_handover_queue(room: Room) -> None:
    settings, snapshot = still_snapshot(room)
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    app = make_app(settings, mux=FakeMux(), probe=AliveProbe(), where=where, snapshot=snapshot)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.screen.query_one("#queue", HandoverQueue).border_title == ("Handovers 0 pending")


def test_the_readmes_picture_is_the_current_console() -> None:
    """docs/console.svg is the 120x35 picture above; after a change to the console,
    update the snapshots, look at them, then copy it:
    cp 'tests/ui/__snapshots__/test_console_sizes/test_console_pictures[120x35-agent-room-dark].svg'
    docs/console.svg"""
    root = Path(__file__).parents[2]
    snapshot = Path(__file__).parent / "__snapshots__" / "test_console_sizes"
    picture = snapshot / "test_console_pictures[120x35-agent-room-dark].svg"
    assert (root / "docs" / "console.svg").read_bytes() == picture.read_bytes()
    assert "docs/console.svg" in (root / "README.md").read_text()


async def test_the_flow_counts_one_message_in_the_singular(room: Room) -> None:
    room.join("api")
    room.join("web")
    room.send("api", "web", "GET /tasks is live")
    settings, snapshot = still_snapshot(room)
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    app = make_app(settings, mux=FakeMux(), probe=AliveProbe(), where=where, snapshot=snapshot)
    async with app.run_test(size=(120, 35)) as pilot:
        await pilot.pause()
        flow = app.screen.query_one("#flow", FlowTimeline)
        assert flow.border_title == "Message flow · 1 message"
