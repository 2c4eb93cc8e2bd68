"""``FlowTimeline``: the live message flow, newest at the bottom.

Each line is one audit event of a message (sent, delivered, read, failed) or a
handover (requested, approved, rejected, expired), sender -> recipient, with the status
the message had at that moment and the start of its body, escaped (``core.printable``),
in the order the events happened.

The flow is a log of lines, not a table: a header and one line per event, each drawn
once (Rich lays its cells out) and kept until the event or the flow's looks change. A
new picture of the room only says which events the flow holds; the lines scroll past
as they are, with no row bookkeeping. While agents talk a picture comes about once a
message, and each moves every line of the panel up by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import ClassVar, NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.geometry import Region, Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from agent_room.core.snapshot import FlowEvent, RoomSnapshot
from agent_room.turn.core.printable import printable

STATUS_COLOURS = {
    "queued": "warning",
    "held": "accent",
    "delivered": "success",
    "read": "success",
    "failed": "error",
    "cancelled": "state-ended",
}
"""Theme variable of each delivery status."""
EVENT_MARKS = {
    "sent": "→",
    "delivered": "✓",
    "read": "✓✓",
    "failed": "✗",
    "retried": "↻",
    "requested": "⇢",
    "approved": "✔",
    "rejected": "✘",
    "expired": "⌛",
}


class FlowColumn(NamedTuple):
    """A column of the flow: its label, its key and its width (padding aside)."""

    label: str
    key: str
    width: int


FIXED_COLUMNS = (
    FlowColumn("Time", "time", 8),
    FlowColumn("", "mark", 2),
    FlowColumn("Event", "event", 18),
    FlowColumn("From → To", "route", 26),
    FlowColumn("Status", "status", 9),
)
"""The flow's columns before the message, with their widths."""
NARROW_COLUMNS = (
    FlowColumn("Time", "time", 8),
    FlowColumn("", "mark", 2),
    FlowColumn("Event", "event", 18),
    FlowColumn("From → To", "route", 20),
    FlowColumn("Status", "status", 9),
)
"""The same in a panel under ``NARROW`` cells: the message keeps room to be read (the
status stays whole: "delivered" is its longest)."""
NARROW = 100
TINY_COLUMNS = (
    FlowColumn("Time", "time", 8),
    FlowColumn("", "mark", 2),
    FlowColumn("From → To", "route", 20),
)
"""In a panel under ``TINY`` cells: the route and the message, the mark for the event."""
TINY = 80
PADDING = 1
"""Cells of padding each side of a column."""

Piece = tuple[str, Style]
"""Text of a cell and its style."""


def fitted(pieces: Sequence[Piece], width: int) -> Iterator[Piece]:
    """A cell's pieces cut to ``width`` cells, an ellipsis in the last where they are
    longer, as Rich's ``Text.truncate`` cuts a text (the ellipsis in the style of the
    piece it replaces)."""
    if sum(cell_len(text) for text, _ in pieces) <= width:
        yield from pieces
        return
    room = width - 1
    for text, style in pieces:
        length = cell_len(text)
        if length <= room:
            yield text, style
            room -= length
            continue
        if room > 0:
            yield set_cell_size(text, room), style
        yield "…", style
        return


class FlowTimeline(ScrollView, can_focus=True):
    """The message flow of the room."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"flow--header"}
    DEFAULT_CSS = """
    FlowTimeline {
        background: $surface;
        color: $foreground;
        &:focus {
            background-tint: $foreground 5%;
            & > .flow--header { background-tint: $foreground 5%; }
        }
        & > .flow--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .flow--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
    }
    """

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, utc: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.utc = utc
        """Times in UTC rather than local time."""
        self.events: tuple[FlowEvent, ...] = ()
        """The events shown, top to bottom."""
        self.columns: tuple[FlowColumn, ...] = ()
        """The columns shown (a narrow panel leaves some out), the message's last."""
        self._lines: dict[int, tuple[FlowEvent, Strip]] = {}
        """Each shown event's line as last drawn, by the event's id."""
        self._header: Strip | None = None
        self._looks: tuple[object, ...] = ()
        """What every line was drawn with (the columns, the styles, the theme): lines
        drawn with other looks are drawn again."""
        self._frame: tuple[Style, Style] | None = None
        """While lines are drawn: the widget's style and the header's."""
        self._styles: tuple[Style | None, dict[str, Style]] = (None, {})
        """The widget's style and the styles over it by name (``_styled``)."""

    def on_mount(self) -> None:
        """Columns are fitted when the flow is drawn; the newest event stays in sight
        (the flow is anchored to its end), unless the reader scrolls back."""
        self.watch(self.app, "theme", lambda _t: self._redraw(force=True), init=False)
        self.anchor()

    def on_resize(self) -> None:
        """The message column takes a new width."""
        self._redraw()

    def watch_show_vertical_scrollbar(self) -> None:
        """The scrollbar came or went: the message column takes the width it leaves."""
        self._redraw()

    def watch_snapshot(self) -> None:
        """A new room picture."""
        self._redraw()

    def _fit_columns(self) -> bool:
        """Fixed widths but the message's, which takes what the window leaves; whether
        the columns changed."""
        room = self.scrollable_content_region.width
        fixed = TINY_COLUMNS if room < TINY else NARROW_COLUMNS if room < NARROW else FIXED_COLUMNS
        used = sum(column.width for column in fixed) + 2 * PADDING * (len(fixed) + 1)
        columns = (*fixed, FlowColumn("Message", "summary", max(12, room - used)))
        if columns == self.columns:
            return False
        self.columns = columns
        return True

    def _redraw(self, *, force: bool = False) -> None:
        """Show the snapshot's flow: its events in its order, the newest in sight."""
        if not self.is_mounted:
            return
        events = self.snapshot.flow if self.snapshot else ()
        if not (self._fit_columns() or force) and events == self.events:
            return
        if force:
            self._looks = ()
        self.events = events
        shown = {event.id for event in events}
        self._lines = {key: line for key, line in self._lines.items() if key in shown}
        self.virtual_size = Size(self._width(), len(events) + 1)  # the header and a line each
        self.refresh()
        self.scroll_end(animate=False, immediate=True)
        total = self.snapshot.messages if self.snapshot else 0
        title = f"Message flow · {total:,} message{'' if total == 1 else 's'}"
        if title != self.border_title:  # setting it repaints every line, even to the same
            self.border_title = title

    def _width(self) -> int:
        """The columns' width, padding included."""
        return sum(column.width + 2 * PADDING for column in self.columns)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines asked for, with the styles and looks found once for all of them
        (a widget's style walks up every ancestor)."""
        base = self.rich_style
        header = self.get_component_rich_style("flow--header")
        looks = (self.columns, self.size.width, base, header, self.app.theme)
        if looks != self._looks:
            self._looks = looks
            self._lines.clear()
            self._header = None
        self._frame = (base, header)
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        """The header at the top; below it the events from the scroll position on."""
        if self._frame is None:  # called on its own: the looks as they are now
            return self.render_lines(Region(0, y, self.size.width, 1))[0]
        base, header = self._frame
        if y == 0:
            if self._header is None:
                labels = [[(column.label, header)] for column in self.columns]
                self._header = self._line(labels, header, base)
            return self._header
        index = y - 1 + self.scroll_offset.y
        if index >= len(self.events):
            return Strip.blank(self.size.width, base)
        event = self.events[index]
        kept = self._lines.get(event.id)
        if kept is not None and kept[0] == event:
            return kept[1]
        line = self._line(self._cells(event, base), base, base)
        self._lines[event.id] = (event, line)
        return line

    def _line(self, cells: Sequence[Sequence[Piece]], style: Style, base: Style) -> Strip:
        """A line of the given cells (each cut to its column, an ellipsis where it is
        longer) in ``style``, padded; the rest of the width filled, as Textual's table
        fills it."""
        pad = Segment(" " * PADDING, style)
        segments: list[Segment] = []
        for pieces, column in zip(cells, self.columns, strict=True):
            segments.append(pad)
            used = 0
            for text, own in fitted(pieces, column.width):
                segments.append(Segment(text, own))
                used += cell_len(text)
            if (short := column.width - used) > 0:
                segments.append(Segment(" " * short, style))
            segments.append(pad)
        width = self.size.width
        left = max(0, width - self._width())
        fill = Style.from_color(style.color, style.bgcolor)
        if style.bgcolor is not None:
            blended = Color.from_rich_color(style.bgcolor).blend(
                self.background_colors[1], factor=0.25
            )
            fill = Style.from_color(style.color, blended.rich_color)
        segments.append(Segment(" " * left, fill))
        return Strip(segments).adjust_cell_length(width, base).simplify()

    def _cells(self, event: FlowEvent, base: Style) -> list[list[Piece]]:
        """An event's cells, in the order of the columns shown: each its pieces of text
        with their styles over ``base``."""
        styled = self._styled(base)
        kind = f"{event.message_kind} {event.kind}" if event.message_kind else event.kind
        colour = self.app.theme_variables.get(STATUS_COLOURS.get(event.status, ""), "")
        dim = styled("dim")
        cells: dict[str, list[Piece]] = {
            "time": [(self._time(event.at), dim)],
            "mark": [(EVENT_MARKS.get(event.kind, "·"), base)],
            "event": [(kind, base)],
            "route": [(f"@{event.sender}", base), (" → ", dim), (f"@{event.recipient}", base)],
            "status": [(event.status, styled(colour) if colour else base)],
            "summary": [(printable(event.summary), base)],
        }
        return [cells[column.key] for column in self.columns]

    def _styled(self, base: Style) -> Callable[[str], Style]:
        """``base`` with a style by its name (``dim``, a theme's colour), each found once
        for the lines drawn with the same looks."""
        if self._styles[0] != base:
            self._styles = (base, {})
        found = self._styles[1]
        console = self.app.console

        def style(name: str) -> Style:
            if (known := found.get(name)) is None:
                known = found[name] = base + console.get_style(name)
            return known

        return style

    def _time(self, at: float) -> str:
        moment = datetime.fromtimestamp(at, tz=UTC if self.utc else None)
        return moment.strftime("%H:%M:%S")
