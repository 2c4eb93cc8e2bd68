"""The operator's reach from the console: the notifier worker, writing to agents as
``@operator``, the messages agents wrote to ``@operator``, and the popup's
``--until-clear``.

Mixed into the app (after ``EnterMixin``, whose entering it refuses in a browser).
Sends and reads run in thread workers through the room service; the notifier runs under
the room's ``notifier`` lease like the other leased workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

from agent_room.adapters.git import GitCli
from agent_room.core.attention import OPERATOR
from agent_room.core.errors import RoomError
from agent_room.ui.enter import EnterMixin
from agent_room.ui.messages import RefreshWanted

if TYPE_CHECKING:
    from agent_room.core.snapshot import RoomSnapshot
    from agent_room.room import Room
    from agent_room.ui.screens.main import MainScreen
    from agent_room.ui.settings import ConsoleSettings
    from agent_room.workers.notifier import Notifier


class ReachMixin(EnterMixin):
    """The operator's voice and ears, for the console app."""

    settings: ConsoleSettings
    decided = False
    """Whether the operator decided a handover here (``--until-clear`` waits for one)."""

    if TYPE_CHECKING:

        @property
        def main(self) -> MainScreen:
            """The main screen."""
            ...

        def open_room(self) -> Room:
            """A fresh connection to the room."""
            ...

    # -- entering: not from a browser ------------------------------------------------

    def start_enter(self, name: str) -> None:
        """Enter a session, except in a browser: there is no tmux client to switch."""
        if self.settings.served:
            self.notify(
                "Entering an agent needs a terminal: run agent-room enter NAME in tmux.",
                severity="warning",
            )
            return
        super().start_enter(name)

    # -- the notifier ------------------------------------------------------------------

    def _make_notifier(self, room: Room) -> Notifier:
        """The notifier on ``room`` (run by the app's supervisor), with the channels that
        can speak here; the others said once, unless they are the defaults."""
        from agent_room.ui.settings import NotifySettings
        from agent_room.workers.notifier import Notifier, build_channels

        channels, problems = build_channels(self.settings.notify, room, self.where.socket)
        if self.settings.notify.channels == NotifySettings().channels:
            problems = []  # the defaults: no desktop here is no news (agent-room notify says)
        for problem in problems:  # a toast is a message: safe from the worker's thread
            self.notify(problem, title="Notifications", severity="warning", timeout=10)

        def on_problem(channel: str, problem: str | None) -> None:
            if problem is not None:
                self.notify(f"{channel}: {problem}", title="Notification failed", severity="error")

        return Notifier(
            room,
            self.probe,
            channels,
            policy=self.settings.notify.policy(),
            on_problem=on_problem,
            git=GitCli() if self.settings.code else None,
        )

    # -- --until-clear -----------------------------------------------------------------

    def leave_when_clear(self, snapshot: RoomSnapshot | None) -> None:
        """In a popup opened ``--until-clear``: close once a decision left nothing pending."""
        clear = snapshot is not None and snapshot.pending == 0
        if self.settings.until_clear and self.decided and clear:
            self.exit(0)

    # -- the operator's voice ----------------------------------------------------------

    def action_write(self) -> None:
        """Write to the selected agent as ``@operator``."""
        row = self.main.sessions.selected
        if row is None:
            self.notify("No session selected.", severity="warning")
            return
        self._ask_and_send(row.name, "")

    def _ask_and_send(self, name: str, about: str) -> None:
        from agent_room.ui.screens.voice import WriteScreen

        def written(text: str | None) -> None:
            if text:
                self._send_as_operator(name, text)

        self.push_screen(WriteScreen(name, about=about), written)

    @work(thread=True, group="voice", exit_on_error=False)
    def _send_as_operator(self, name: str, text: str) -> None:
        room = self.open_room()
        try:
            message_id, hold = room.send_checked(OPERATOR, name, text)
            said = f"Message #{message_id} to @{name} queued."
            if hold is not None:
                said = f"Message #{message_id} to @{name} is held by the loop breaker."
            self.call_from_thread(self.notify, said)
        except RoomError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error")
        finally:
            room.close()
            self.post_message(RefreshWanted())

    def action_operator_inbox(self) -> None:
        """The messages agents wrote to ``@operator``; choosing one answers it."""
        self._read_operator_inbox()

    @work(thread=True, group="voice", exit_on_error=False)
    def _read_operator_inbox(self) -> None:
        room = self.open_room()
        try:
            rows = room.inbox(OPERATOR)
        except RoomError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error")
            return
        finally:
            room.close()
            self.post_message(RefreshWanted())
        if not rows:
            self.call_from_thread(self.notify, "No message for you.")
            return
        found = [(int(r["id"]), str(r["sender"]), str(r["body"])) for r in rows]
        self.call_from_thread(self._show_operator_inbox, found)

    def _show_operator_inbox(self, found: list[tuple[int, str, str]]) -> None:
        from agent_room.ui.screens.voice import OperatorInbox

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self._ask_and_send(*answer)

        self.push_screen(OperatorInbox(found), chosen)
