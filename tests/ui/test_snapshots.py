"""Pictures of the console (pytest-textual-snapshot), deterministic by construction.

Every picture is of the seeded room (``tests/ui/seed.py``) read once with a frozen clock
into one snapshot; the app gets it with nothing live (no reader, watcher or deliverer),
times in UTC and a fixed room path, so the picture is the same on every machine, in
every checkout and under ``-n auto``. Update with ``--snapshot-update`` after checking
the SVGs by eye.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_room.room.service import Room
from tests.ui.conftest import THEMES, settle_queue, still_app
from tests.ui.seed import FrozenClock

SnapCompare = Callable[..., bool]


def test_main_screen_wide(snap_compare: SnapCompare, seeded: tuple[Room, FrozenClock]) -> None:
    """160x48, dark theme. Must show: six sessions in all four states (busy, idle,
    waiting, ended, each in its state colour) with depth-indented names, cwd, pane, age,
    unread and "1 failed" for @docs; the tree with @api under @backend, @reviewer under
    @api and the Explore subagent as a leaf; the message flow ending with the two
    handover requests; the traffic matrix with @backend -> @frontend the busiest edge;
    two pending handovers, #8 highlighted with a "⚠ cycle" badge and the preview's
    "closes a cycle: @api → @backend → @frontend → @api" warning over its Markdown;
    "2 pending handovers" in the header; the status bar and the footer's keys."""
    room, clock = seeded
    assert snap_compare(still_app(room, clock), terminal_size=(160, 48), run_before=settle_queue)


def test_main_screen_narrow(snap_compare: SnapCompare, seeded: tuple[Room, FrozenClock]) -> None:
    """100x32, dark theme: the same room in a small terminal. Every panel is still there
    (sessions, tree, flow, traffic, handover queue and preview), narrower; the sessions
    columns are fitted to their panel (cut with …, never a sideways scrollbar); the header
    still counts 2 pending."""
    room, clock = seeded
    assert snap_compare(still_app(room, clock), terminal_size=(100, 32), run_before=settle_queue)


@pytest.mark.parametrize("theme", THEMES)
def test_each_theme(
    snap_compare: SnapCompare, seeded: tuple[Room, FrozenClock], theme: str
) -> None:
    """140x40 in each shipped theme: the seeded main screen with that theme's
    background, panels and the four state colours (busy, idle, waiting, ended), the
    cycle badge in the theme's cycle colour, and the traffic edges in its edge colour."""
    room, clock = seeded
    assert snap_compare(
        still_app(room, clock, theme), terminal_size=(140, 40), run_before=settle_queue
    )
