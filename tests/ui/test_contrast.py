"""Panels stay visible when not focused: an unfocused border has at least 3:1 contrast
(WCAG 2.2, 1.4.11 non-text contrast) with the panel's own background and the screen's,
in every shipped theme. The colours are the ones Textual resolves from the theme and
``app.tcss``, blended as the terminal shows them."""

from __future__ import annotations

import pytest
from textual.color import Color

from agent_room.room.service import Room
from tests.ui.conftest import THEMES, settle_queue, still_app
from tests.ui.seed import FrozenClock

pytestmark = pytest.mark.anyio
PANELS = ("#sessions", "#tree", "#flow", "#traffic", "#queue", "#preview")


def _luminance(color: Color) -> float:
    """WCAG relative luminance of an opaque colour."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(one: Color, other: Color) -> float:
    """The WCAG contrast ratio of two opaque colours (1 to 21)."""
    high, low = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_ratio_is_wcags() -> None:
    assert contrast(Color(0, 0, 0), Color(255, 255, 255)) == pytest.approx(21.0)
    assert contrast(Color(118, 118, 118), Color(255, 255, 255)) == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("theme", THEMES)
async def test_unfocused_borders_have_three_to_one_contrast(
    seeded: tuple[Room, FrozenClock], theme: str
) -> None:
    room, clock = seeded
    app = still_app(room, clock, theme)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle_queue(pilot)
        screen = app.screen.styles.background
        for panel in PANELS:
            widget = app.screen.query_one(panel)
            if widget.has_focus:
                continue
            inside = screen + widget.styles.background  # the panel's shade, on the screen
            border = inside + widget.styles.border_top[1]  # drawn on the panel's shade
            for behind in (inside, screen):
                ratio = contrast(border, behind)
                assert ratio >= 3.0, f"{theme} {panel}: {ratio:.2f}:1 ({border.hex})"
