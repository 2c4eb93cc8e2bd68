"""A room of many sessions paints what is visible first: the table and the tree get a
screenful before the first frame and the rest right after it, and nothing is lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.ui.app import RoomConsole
from agent_room.ui.widgets.sessions import FIRST_ROWS, SessionsTable
from agent_room.ui.widgets.tree import FIRST_NODES, SessionTree
from tests.ui.conftest import until
from tests.ui.seed import FrozenClock

pytestmark = pytest.mark.anyio

EXTRA = max(FIRST_ROWS, FIRST_NODES) + 20


@pytest.fixture
def crowded(seeded: tuple[Room, FrozenClock], room_home: Path) -> int:
    """The seeded room and ``EXTRA`` more sessions; how many there are in all."""
    room, _clock = seeded
    for n in range(EXTRA):
        room.join(f"extra-{n:03d}", pane=f"%{500 + n}")
    return len(room.who())


def _tree_nodes(tree: SessionTree) -> int:
    count, stack = 0, list(tree.root.children)
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children)
    return count


async def test_a_big_room_is_drawn_a_screenful_first_then_whole(
    console: Callable[..., RoomConsole], crowded: int
) -> None:
    app = console()
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: app.snapshot is not None)
        table = app.main.query_one("#sessions", SessionsTable)
        tree = app.main.query_one("#tree", SessionTree)
        await until(pilot, lambda: table.row_count == crowded)
        await until(pilot, lambda: _tree_nodes(tree) >= crowded)
        snapshot = app.snapshot
        assert snapshot is not None
        table._drawn = None  # a full draw again, as a new room picture would make
        table.clear()
        table.redraw(force=True)
        assert table.row_count == FIRST_ROWS  # before the frame: a screenful
        assert table.select_name(f"extra-{EXTRA - 1:03d}")  # asked for: all there at once
        assert table.row_count == crowded
        tree._rebuild(force=True)
        assert _tree_nodes(tree) == FIRST_NODES
        await until(pilot, lambda: _tree_nodes(tree) >= crowded)
