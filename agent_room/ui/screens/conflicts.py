"""``ConflictsScreen``: entity conflicts the ``manual`` merge strategy left to the operator."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from agent_room.turn.core.printable import printable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from textual.app import ComposeResult


class Decision(NamedTuple):
    """Settle conflict ``id``: ``take`` the mention's context, or keep the entity's."""

    id: int
    take: bool


class ConflictsScreen(ModalScreen[Decision | None]):
    """One row per open conflict: the entity, what it says now, what an agent said."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("t", "decide(True)", "Take the new context"),
        Binding("k", "decide(False)", "Keep the entity's"),
    ]

    def __init__(self, conflicts: Sequence[dict[str, Any]]) -> None:
        super().__init__()
        self.conflicts = list(conflicts)
        """Rows of ``Entities.conflicts``, oldest first."""

    def compose(self) -> ComposeResult:
        """Title, table, hint."""
        with Vertical(id="dialog"):
            yield Label("Entity conflicts", id="dialog-title")
            table: DataTable[Text] = DataTable(id="conflicts", cursor_type="row")
            yield table
            hint = "t takes the agent's context, k keeps the entity's, Esc closes."
            if not self.conflicts:
                hint = "No conflicts wait (the manual merge strategy makes them)."
            yield Static(hint, classes="hint")

    def on_mount(self) -> None:
        """Fill the table."""
        table = self.query_one("#conflicts", DataTable)
        table.add_columns("ID", "ENTITY", "NOW", "SAID BY", "NEW")
        for row in self.conflicts:
            table.add_row(
                *(
                    Text(printable(str(cell)), overflow="ellipsis", no_wrap=True)
                    for cell in (
                        f"#{row['id']}",
                        f"{row['type']} {row['name']}",
                        str(row["current"])[:40],
                        f"@{row['agent']}",
                        str(row["context"])[:40],
                    )
                )
            )
        table.focus()

    def action_decide(self, take: bool) -> None:
        """Settle the highlighted conflict."""
        if not self.conflicts:
            return
        row = self.query_one("#conflicts", DataTable).cursor_row
        chosen = self.conflicts[max(0, min(row, len(self.conflicts) - 1))]
        self.dismiss(Decision(int(chosen["id"]), take))

    def action_cancel(self) -> None:
        """Decide nothing."""
        self.dismiss(None)
