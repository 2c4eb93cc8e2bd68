"""``StatusBar``: the background workers' states, the room and the theme, in one line."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from agent_room.turn.core.printable import printable
from agent_room.ui.messages import RETRYING

GOOD = {"on", "active", "watching", "reading"}
BAD = {"error", "failed"}


class StatusBar(Static):
    """One line above the footer."""

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

    def _draw(self) -> None:
        colours = self.app.theme_variables
        text = Text()
        for worker, status in self.statuses:
            failing = status in BAD or status.startswith(RETRYING)
            key = "success" if status in GOOD else "error" if failing else "warning"
            if status == "off":
                key = "state-ended"
            text.append("● ", style=colours.get(key, ""))
            text.append(printable(f"{worker} {status}   "))
        text.append(printable(f"room {self.home}"), style="dim")
        self.update(text)
