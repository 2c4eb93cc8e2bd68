"""``FlowTimeline``: the live message flow, newest at the bottom.

Each line is one audit event of a message (sent, delivered, read, failed) or a
handover (requested, approved, rejected, expired), sender -> recipient, with the status
the message had at that moment and the start of its body, escaped (``core.printable``),
in the order the events happened.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rich.text import Text
from textual.reactive import var
from textual.widgets import DataTable

from agent_room.core.printable import printable
from agent_room.core.snapshot import FlowEvent, RoomSnapshot

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

FIXED_COLUMNS = (
    ("Time", "time", 8),
    ("", "mark", 2),
    ("Event", "event", 18),
    ("From → To", "route", 26),
    ("Status", "status", 9),
)
"""The flow's columns before the message, with their widths."""
NARROW_COLUMNS = (
    ("Time", "time", 8),
    ("", "mark", 2),
    ("Event", "event", 18),
    ("From → To", "route", 20),
    ("Status", "status", 9),
)
"""The same in a panel under ``NARROW`` cells: the message keeps room to be read (the
status stays whole: "delivered" is its longest)."""
NARROW = 100
TINY_COLUMNS = (("Time", "time", 8), ("", "mark", 2), ("From → To", "route", 20))
"""In a panel under ``TINY`` cells: the route and the message, the mark for the event."""
TINY = 80


class FlowTimeline(DataTable[object]):
    """The message flow of the room."""

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, utc: bool = False, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=False, show_cursor=False)
        self.utc = utc
        """Times in UTC rather than local time."""
        self._drawn: tuple[FlowEvent, ...] | None = None
        self._summary_width = 0
        """The message column's width as last fitted."""
        self._keys: tuple[str, ...] = ()
        """The columns shown (a narrow panel leaves some out)."""

    def on_mount(self) -> None:
        """Columns are added when the rows are drawn, fitted to the width."""
        self.watch(self.app, "theme", lambda _t: self._redraw(force=True), init=False)

    def on_resize(self) -> None:
        """The message column takes the new width."""
        self._redraw(force=True)

    def _fit_columns(self) -> bool:
        """Fixed widths (no measuring of every cell) but the message's, which takes what
        the window leaves; whether the columns changed (the rows are then drawn anew)."""
        room = self.scrollable_content_region.width
        fixed = TINY_COLUMNS if room < TINY else NARROW_COLUMNS if room < NARROW else FIXED_COLUMNS
        used = sum(width for _, _, width in fixed) + 2 * self.cell_padding * (len(fixed) + 1)
        summary = max(12, room - used)
        if summary == self._summary_width and len(fixed) + 1 == len(self._keys):
            return False
        self._summary_width = summary
        self.clear(columns=True)
        self._keys = (*(key for _, key, _ in fixed), "summary")
        for label, key, width in fixed:
            self.add_column(label, key=key, width=width)
        self.add_column("Message", key="summary", width=summary)
        return True

    def watch_snapshot(self) -> None:
        """A new room picture."""
        self._redraw()

    def _time(self, at: float) -> str:
        moment = datetime.fromtimestamp(at, tz=UTC if self.utc else None)
        return moment.strftime("%H:%M:%S")

    def _redraw(self, *, force: bool = False) -> None:
        if not self.is_mounted:
            return
        events = self.snapshot.flow if self.snapshot else ()
        force = self._fit_columns() or force
        if events == self._drawn and not force:
            return
        self._drawn = events
        colours = self.app.theme_variables
        self.clear()
        for event in events:
            colour = colours.get(STATUS_COLOURS.get(event.status, ""), "")
            kind = f"{event.message_kind} {event.kind}" if event.message_kind else event.kind
            cells = {
                "time": Text(self._time(event.at), style="dim"),
                "mark": Text(EVENT_MARKS.get(event.kind, "·")),
                "event": Text(kind, overflow="ellipsis", no_wrap=True),
                "route": Text.assemble(
                    f"@{event.sender}",
                    (" → ", "dim"),
                    f"@{event.recipient}",
                    overflow="ellipsis",
                    no_wrap=True,
                ),
                "status": Text(event.status, style=colour, overflow="ellipsis", no_wrap=True),
                "summary": Text(printable(event.summary), overflow="ellipsis", no_wrap=True),
            }
            self.add_row(*(cells[key] for key in self._keys))
        self.scroll_end(animate=False)
        total = self.snapshot.messages if self.snapshot else 0
        self.border_title = f"Message flow · {total:,} messages"
