"""The operator's voice: writing to an agent, and the messages agents wrote to
``@operator``, each answered from here."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from agent_room.turn.core.printable import printable
from agent_room.ui.screens.modals import TextDialog


class WriteScreen(TextDialog):
    """Asks for what the operator writes to one agent; the agent gets it as a message
    from ``@operator``, delivered like any other."""

    def __init__(self, name: str, *, about: str = "") -> None:
        super().__init__()
        self.recipient = name
        """The agent written to."""
        self.about = about
        """What is answered (a message of the agent's), if anything."""

    def compose(self) -> ComposeResult:
        """Title, the text, buttons."""
        hint = f"Answering: {self.about}" if self.about else "It is delivered like any message."
        yield from self.dialog(
            f"Write to @{self.recipient} as @operator",
            Text(printable(hint)),
            Input(placeholder="Your message", id="text"),
            Button("Send", variant="primary", id="confirm"),
        )

    def _submit(self) -> None:
        text = self.query_one("#text", Input).value.strip()
        if not text:
            self.refuse("Write something first.")
            return
        self.dismiss(text)


class OperatorInbox(ModalScreen[tuple[str, str] | None]):
    """The messages agents wrote to ``@operator``, newest last; choosing one answers its
    sender. Shown messages are read (they leave the header's count)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Close")]

    def __init__(self, messages: list[tuple[int, str, str]]) -> None:
        super().__init__()
        self.messages = messages
        """(id, sender, body) of each message."""

    def compose(self) -> ComposeResult:
        """Title, the messages, a hint."""
        with Vertical(id="dialog"):
            yield Label(f"For you: {len(self.messages)} message(s)", id="dialog-title")
            options = [
                Option(Text(printable(f"#{mid} @{sender}: {' '.join(body.split())}"[:200])))
                for mid, sender, body in self.messages
            ]
            yield OptionList(*options, id="operator-inbox")
            yield Static("Enter answers the sender · Esc closes", classes="hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Answer the chosen message's sender."""
        event.stop()
        mid, sender, body = self.messages[event.option_index]
        self.dismiss((sender, f"#{mid}: {' '.join(body.split())[:60]}"))

    def action_cancel(self) -> None:
        """Close."""
        self.dismiss(None)
