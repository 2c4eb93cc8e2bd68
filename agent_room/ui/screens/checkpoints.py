"""``CheckpointsScreen``: a session's resume checkpoints, and a resume from one."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, Static

from agent_room.turn.core.names import is_valid_name

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from textual.app import ComposeResult


class Resume(NamedTuple):
    """What the operator chose: resume checkpoint ``id`` as agent ``name``, in ``mode``."""

    id: int
    name: str
    mode: str


class CheckpointsScreen(ModalScreen[Resume | None]):
    """Lists the checkpoints of one session, newest first; f / p resume the highlighted
    one in full or partially as a new agent (named in the field below)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("f", "resume('full')", "Resume (full)"),
        Binding("p", "resume('partial')", "Resume (last 50)"),
    ]

    def __init__(self, name: str, checkpoints: Sequence[dict[str, Any]], new_name: str) -> None:
        super().__init__()
        self.session_name = name
        """The session whose checkpoints these are."""
        self.checkpoints = list(checkpoints)
        """Rows of ``room.checkpoints``, newest first."""
        self.new_name = new_name
        """The name the resumed agent gets unless the operator changes it."""

    def compose(self) -> ComposeResult:
        """Title, the table, the new agent's name, buttons."""
        with Vertical(id="dialog"):
            yield Label(f"Checkpoints of @{self.session_name}", id="dialog-title")
            table: DataTable[str] = DataTable(id="checkpoints", cursor_type="row")
            yield table
            yield Static("Resume as:", classes="hint")
            yield Input(value=self.new_name, placeholder="the new agent's name", id="new-name")
            yield Static("", id="dialog-error")
            with Horizontal(id="dialog-buttons"):
                yield Button("Resume (full)", variant="primary", id="full")
                yield Button("Resume (last 50)", id="partial")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Fill the table; say so when there is nothing to resume."""
        table = self.query_one("#checkpoints", DataTable)
        table.add_columns("ID", "KIND", "TAKEN", "NOTE")
        for row in self.checkpoints:
            taken = time.strftime("%m-%d %H:%M", time.localtime(float(row["created_at"])))
            table.add_row(f"#{row['id']}", str(row["kind"]), taken, str(row["note"] or ""))
        if not self.checkpoints:
            self.query_one("#dialog-error", Static).update(
                "No checkpoints yet: one is taken when the session ends or compacts, or with"
                f" agent-room checkpoint {self.session_name}."
            )
        table.focus()

    def action_resume(self, mode: str) -> None:
        """Resume the highlighted checkpoint."""
        if not self.checkpoints:
            return
        name = self.query_one("#new-name", Input).value.strip().removeprefix("@")
        if not is_valid_name(name):
            self.query_one("#dialog-error", Static).update(
                "A name is a-z, 0-9, _ and -, up to 32, starting with a letter or digit."
            )
            return
        row = self.query_one("#checkpoints", DataTable).cursor_row
        chosen = self.checkpoints[max(0, min(row, len(self.checkpoints) - 1))]
        self.dismiss(Resume(int(chosen["id"]), name, mode))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Resume or cancel."""
        event.stop()
        if event.button.id in ("full", "partial"):
            self.action_resume(str(event.button.id))
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        """Resume nothing."""
        self.dismiss(None)
