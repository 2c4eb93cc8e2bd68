"""Small modal screens: the reason for a rejection, a yes/no confirmation, a new name,
and the one-line dialog they and the operator's voice share."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from agent_room.turn.core.names import is_valid_name
from agent_room.turn.core.printable import printable


class TextDialog(ModalScreen[str | None]):
    """A dialog that asks for one line: enter or the confirm button submits it,
    escape or cancel leaves with ``None``. Subclasses check the line in ``_submit``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def dialog(self, title: str, hint: str | Text, field: Input, confirm: Button) -> ComposeResult:
        """The layout every one-line dialog shares: title, hint, field, error line, buttons."""
        with Vertical(id="dialog"):
            yield Label(title, id="dialog-title")
            yield Static(hint, classes="hint")
            yield field
            yield Static("", id="dialog-error")
            with Horizontal(id="dialog-buttons"):
                yield confirm
                yield Button("Cancel", id="cancel")

    def refuse(self, why: str) -> None:
        """Say under the field why the line is not taken; the dialog stays open."""
        self.query_one("#dialog-error", Static).update(why)

    def _submit(self) -> None:
        raise NotImplementedError

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the field submits."""
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Submit or cancel."""
        event.stop()
        if event.button.id == "confirm":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        """Leave without submitting."""
        self.dismiss(None)


class RejectScreen(TextDialog):
    """Asks why a handover is rejected; the sender receives the reason."""

    def __init__(self, handover_id: int, route: str) -> None:
        super().__init__()
        self.handover_id = handover_id
        """The handover being rejected."""
        self.route = route
        """``@a → @b``, for the title."""

    def compose(self) -> ComposeResult:
        """Title, reason, buttons."""
        yield from self.dialog(
            f"Reject handover #{self.handover_id} {self.route}",
            "The sender receives the reason.",
            Input(placeholder="Why? (required)", id="reason"),
            Button("Reject", variant="error", id="confirm"),
        )

    def _submit(self) -> None:
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.refuse("A rejection needs a reason.")
            return
        self.dismiss(reason)


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no before something that starts a process."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "answer(False)", "No"),
        Binding("y", "answer(True)", "Yes"),
    ]

    def __init__(self, title: str, detail: str) -> None:
        super().__init__()
        self.title_text = title
        """The question."""
        self.detail = detail
        """What will happen."""

    def compose(self) -> ComposeResult:
        """Question, detail, buttons."""
        with Vertical(id="dialog"):
            yield Label(Text(printable(self.title_text)), id="dialog-title")
            # the detail quotes a stored cwd and command line: escaped, never markup
            yield Static(Text(printable(self.detail, multiline=True)), classes="hint")
            with Horizontal(id="dialog-buttons"):
                yield Button("Yes", variant="primary", id="yes")
                yield Button("No", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer."""
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Answer by key."""
        self.dismiss(yes)


class RenameScreen(TextDialog):
    """Asks for a session's new name; what waits for the session follows it."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.old = name
        """The session's name now."""

    def compose(self) -> ComposeResult:
        """Title, new name, buttons."""
        yield from self.dialog(
            f"Rename @{self.old}",
            "Its unread messages, timers and links follow it.",
            Input(value=self.old, placeholder="the new name", id="new-name"),
            Button("Rename", variant="primary", id="confirm"),
        )

    def _submit(self) -> None:
        new = self.query_one("#new-name", Input).value.strip().removeprefix("@")
        if not is_valid_name(new):
            self.refuse("A name is a-z, 0-9, _ and -, up to 32, starting with a letter or digit.")
            return
        self.dismiss(None if new == self.old else new)
