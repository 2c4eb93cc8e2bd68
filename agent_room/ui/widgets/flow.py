"""``FlowTimeline``: the live message flow, newest at the bottom.

Each line is one audit event of a message (sent, delivered, read, failed) or a
handover (requested, approved, rejected, expired), sender -> recipient, with the status
the message had at that moment and the start of its body, escaped (``core.printable``),
in the order the events happened.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime
from operator import attrgetter

from rich.text import Text
from textual.reactive import var

from agent_room.core.snapshot import FlowEvent, RoomSnapshot
from agent_room.turn.core.printable import printable
from agent_room.ui.widgets.table import KeptCellsTable

_but_status = attrgetter(*(f.name for f in fields(FlowEvent) if f.name != "status"))
"""What an event shows but its status (which moves on while it stays in the flow), as a
tuple: quicker to compare than copies made with ``dataclasses.replace``."""

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


class FlowTimeline(KeptCellsTable):
    """The message flow of the room."""

    snapshot: var[RoomSnapshot | None] = var(None)
    """The room, as last read."""

    def __init__(self, *, utc: bool = False, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=False, show_cursor=False)
        self.utc = utc
        """Times in UTC rather than local time."""
        self._drawn: tuple[FlowEvent, ...] | None = None
        """The snapshot's flow as last drawn."""
        self._rows: tuple[FlowEvent, ...] = ()
        """The events of the table's rows, in order (the flow drawn)."""
        self._cells: dict[int, tuple[FlowEvent, dict[str, Text]]] = {}
        """The cells of each event in the table, by its id: a row drawn again gets the
        same value objects, so the table keeps their lines."""
        self._summary_width = 0
        """The message column's width as last fitted."""
        self._keys: tuple[str, ...] = ()
        """The columns shown (a narrow panel leaves some out)."""

    def on_mount(self) -> None:
        """Columns are added when the rows are drawn, fitted to the width; the newest
        event stays in sight (the flow is anchored to its end, wherever the rows' height
        is settled), unless the reader scrolls back."""
        self.watch(self.app, "theme", lambda _t: self._redraw(force=True), init=False)
        self.anchor()

    def on_resize(self) -> None:
        """The message column takes a new width (a resize also comes when rows are added:
        the table's virtual size grows; ``_fit_columns`` tells the two apart)."""
        self._redraw()

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
        """Draw the snapshot's flow, changing only what moved since the last draw.

        The flow mostly moves by events added at the end, the oldest leaving it at the
        top and the status of a few messages moving on: the rows that left are removed,
        the new ones added and the changed status cells replaced, so the other rows keep
        their rendering, and a full flow keeps its height (a table that grows or shrinks
        makes Textual lay out and draw the whole screen again). An event that comes
        between those drawn (the room's events are not written in the order they
        happened) has the rows from there on drawn again, with the cells they had; one
        that left from among them takes only its row away. New
        columns or a theme draw the flow anew. The rows always follow the snapshot's
        order.
        """
        if not self.is_mounted:
            return
        events = self.snapshot.flow if self.snapshot else ()
        force = self._fit_columns() or force
        drawn, self._drawn = self._drawn, events
        if events == drawn and not force:
            return
        colours = self.app.theme_variables
        same, changed = 0, list[FlowEvent]()
        if force or drawn is None:
            self.clear()
            self._cells.clear()
        else:
            gone, same, changed = _kept(self._rows, events)
            self.remove_rows(str(e.id) for e in gone)
        if "status" in self._keys:
            for event in changed:
                self.update_cell(str(event.id), "status", self._cells_of(event, colours)["status"])
        for event in events[same:]:
            cells = self._cells_of(event, colours)
            self.add_row(*(cells[key] for key in self._keys), key=str(event.id))
        self._rows = events
        shown = {event.id for event in events}
        self._cells = {key: cells for key, cells in self._cells.items() if key in shown}
        self.scroll_end(animate=False)
        total = self.snapshot.messages if self.snapshot else 0
        title = f"Message flow · {total:,} message{'' if total == 1 else 's'}"
        if title != self.border_title:  # setting it repaints every line, even to the same
            self.border_title = title

    def _cells_of(self, event: FlowEvent, colours: dict[str, str]) -> dict[str, Text]:
        """An event's cells: those it had when drawn before (a new status cell if only
        its status moved on), else new ones."""
        known = self._cells.get(event.id)
        if known is not None and known[0] == event:
            return known[1]
        if known is not None and _but_status(known[0]) == _but_status(event):
            cells = {**known[1], "status": self._status(event, colours)}
        else:
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
                "status": self._status(event, colours),
                "summary": Text(printable(event.summary), overflow="ellipsis", no_wrap=True),
            }
        self._cells[event.id] = (event, cells)
        return cells

    @staticmethod
    def _status(event: FlowEvent, colours: dict[str, str]) -> Text:
        colour = colours.get(STATUS_COLOURS.get(event.status, ""), "")
        return Text(event.status, style=colour, overflow="ellipsis", no_wrap=True)


def _kept(
    rows: tuple[FlowEvent, ...], events: tuple[FlowEvent, ...]
) -> tuple[list[FlowEvent], int, list[FlowEvent]]:
    """How the table's ``rows`` become ``events``: (the rows to remove, how many rows left
    after that are the flow's first events but for their status, those among them whose
    status moved on); the events after those are added.

    The rows that left the flow go wherever they stand, not only at the top: the reader
    keeps the room's newest events by when they were written and shows them by when they
    happened, so the one that leaves as a new one comes may stand anywhere (a burst's
    events written late). A row kept whose event changed, and every row after it, are
    drawn again."""
    ids = {event.id for event in events}
    gone = [row for row in rows if row.id not in ids]
    left = [row for row in rows if row.id in ids]
    same, changed = 0, []
    for old, new in zip(left, events, strict=False):
        if old is not new and _but_status(old) != _but_status(new):
            break
        if old.status != new.status:
            changed.append(new)
        same += 1
    return [*gone, *left[same:]], same, changed
