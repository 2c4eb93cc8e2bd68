"""``Escaped``: a Rich renderable drawn with nothing in it that a terminal would act on.

Text the console draws is escaped with ``core.printable`` before it is laid out. A few
renderers make new characters of their own, though: Markdown decodes ``&#27;`` or
``&rlm;`` into ESC and a bidi mark, and a link's target travels in the style, not the
text. Wrapping such a renderable escapes what it finally yields, segment by segment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.measure import Measurement
from rich.segment import Segment

from agent_room.turn.core.printable import printable

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult


class Escaped:
    """Render ``renderable``, then show every segment's text and link escaped."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable
        """What is drawn."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """The inner renderable's segments, escaped; control segments are dropped."""
        for text, style, control in console.render(self.renderable, options):
            if control:
                continue
            link = style.link if style is not None else None
            shown = style.update_link(printable(link)) if style is not None and link else style
            yield Segment(printable(text, multiline=True), shown)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """As wide as the inner renderable."""
        return Measurement.get(console, options, self.renderable)
