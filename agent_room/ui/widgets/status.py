"""``StatusBar``: the background workers' states, the room and the theme, in one line."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from agent_room.turn.core.printable import printable
from agent_room.ui.messages import RETRYING

GOOD = {"on", "active", "watching", "reading"}
BAD = {"error", "failed"}
ROOM_LEAST = 12
"""The fewest cells the room's path is cut to before the workers lose their words."""


class StatusBar(Static):
    """One line above the footer.

    Where the line is too narrow, the room's path is cut from its start first; then a
    worker that is well shows only its dot and its name, then one that is off or standing
    by. A failing worker always keeps its words.
    """

    statuses: reactive[tuple[tuple[str, str], ...]] = reactive(())
    """(worker, status) pairs in display order."""
    home: reactive[str] = reactive("")
    """The room directory shown at the right."""

    def watch_statuses(self) -> None:
        """A worker changed state."""
        self._draw()

    def watch_home(self) -> None:
        """The room is known."""
        self._draw()

    def on_resize(self) -> None:
        """The line takes the longest form the new width holds."""
        self._draw()

    def _draw(self) -> None:
        width = self.content_size.width
        room = printable(f"room {self.home}")
        levels = ((), ("success",), ("success", "warning", "state-ended"))
        for terse in levels:
            workers = self._workers(terse)
            left = width - workers.cell_len
            if not width or cell_len(room) <= left or left >= ROOM_LEAST:
                break
        if width and cell_len(room) > left:
            room = "room …" + room[len(room) - max(left - len("room …"), 1) :]
        workers.append(room, style="dim")
        self.update(workers)

    def _workers(self, terse: tuple[str, ...]) -> Text:
        """The workers' dots and words, without words for those whose colour is in ``terse``."""
        colours = self.app.theme_variables
        text = Text()
        for worker, status in self.statuses:
            failing = status in BAD or status.startswith(RETRYING)
            key = "success" if status in GOOD else "error" if failing else "warning"
            if status == "off":
                key = "state-ended"
            text.append("● ", style=colours.get(key, ""))
            words = worker if key in terse else f"{worker} {status}"
            text.append(printable(words) + ("  " if terse else "   "))
        return text
