"""``FlowTimeline``: the live message flow, newest at the bottom.

Each line is one audit event of a message (sent, delivered, read, failed) or a
handover (requested, approved, rejected, expired), sender -> recipient, with the
message's delivery status now and the start of its body, escaped (``core.printable``).
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


class FlowTimeline(DataTable[object]):
    """The message flow of the room."""

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, utc: bool = False, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=False, show_cursor=False)
        self.utc = utc
        """Times in UTC rather than local time."""
        self._drawn: tuple[FlowEvent, ...] | None = None

    def on_mount(self) -> None:
        """The columns."""
        for label, key, width in (
            ("Time", "time", 8),
            ("", "mark", 2),
            ("Event", "event", 18),
            ("From → To", "route", 26),
            ("Status", "status", 9),
            ("Message", "summary", 60),
        ):  # fixed widths: no measuring of every cell
            self.add_column(label, key=key, width=width)
        self.watch(self.app, "theme", lambda _t: self._redraw(force=True), init=False)

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
        if events == self._drawn and not force:
            return
        self._drawn = events
        colours = self.app.theme_variables
        self.clear()
        for event in events:
            colour = colours.get(STATUS_COLOURS.get(event.status, ""), "")
            kind = f"{event.message_kind} {event.kind}" if event.message_kind else event.kind
            self.add_row(
                Text(self._time(event.at), style="dim"),
                Text(EVENT_MARKS.get(event.kind, "·")),
                Text(kind),
                Text.assemble(f"@{event.sender}", (" → ", "dim"), f"@{event.recipient}"),
                Text(event.status, style=colour),
                Text(printable(event.summary), overflow="ellipsis", no_wrap=True),
            )
        self.scroll_end(animate=False)
        total = self.snapshot.messages if self.snapshot else 0
        self.border_title = f"Message flow · {total:,} messages"
