"""``OperatorVoice``: the operator's reach from the console — approving and rejecting
handovers, writing to agents as ``@operator`` and reading the messages agents wrote to
``@operator``.

An object the app owns, given what it needs. Sends and reads run in thread workers
through ``RoomWork``; what they find comes back as messages the app hands back here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import App

from agent_room.adapters.git import GitCli
from agent_room.core.attention import OPERATOR
from agent_room.room.worktrees import approve_with_code
from agent_room.ui.messages import InboxRead, Notice
from agent_room.ui.room_work import RoomWork
from agent_room.ui.screens.modals import RejectScreen
from agent_room.ui.screens.voice import OperatorInbox, WriteScreen

if TYPE_CHECKING:
    from agent_room.core.snapshot import HandoverRow, RoomSnapshot
    from agent_room.room.service import Room


class OperatorVoice:
    """The operator's voice and ears, for the console app."""

    def __init__(self, app: App[int], work: RoomWork) -> None:
        self._app = app
        self._work = work
        self.decided = False
        """Whether the operator decided a handover here (``--until-clear`` waits for one)."""

    def approve(self, handover: HandoverRow | None) -> None:
        """Approve ``handover`` (the one highlighted)."""
        if handover is None:
            self._app.notify("No handover is waiting.", severity="warning")
            return
        self._decide(handover.id, None)

    def reject(self, handover: HandoverRow | None) -> None:
        """Ask why, then reject ``handover`` (the one highlighted)."""
        if handover is None:
            self._app.notify("No handover is waiting.", severity="warning")
            return

        def rejected(reason: str | None) -> None:
            if reason:
                self._decide(handover.id, reason)

        route = f"@{handover.sender} → @{handover.recipient}"
        self._app.push_screen(RejectScreen(handover.id, route), rejected)

    def _decide(self, handover_id: int, reason: str | None) -> None:
        self.decided = True
        self._work.run(
            lambda room: _decide(room, handover_id, reason), group="decide", refresh=True
        )

    def cleared(self, snapshot: RoomSnapshot | None) -> bool:
        """A decision here left nothing pending (a popup opened ``--until-clear`` closes)."""
        return self.decided and snapshot is not None and snapshot.pending == 0

    def write(self, name: str, about: str = "") -> None:
        """Ask what to write to ``name``, then send it as ``@operator``."""

        def written(text: str | None) -> None:
            if text:
                self._work.run(lambda room: _send(room, name, text), group="voice", refresh=True)

        self._app.push_screen(WriteScreen(name, about=about), written)

    def read_inbox(self) -> None:
        """Read the messages agents wrote to ``@operator`` (in a thread)."""
        self._work.run(_inbox, group="voice", refresh=True)

    def show_inbox(self, found: list[tuple[int, str, str]]) -> None:
        """The messages read; choosing one answers it."""

        def chosen(answer: tuple[str, str] | None) -> None:
            if answer is not None:
                self.write(*answer)

        self._app.push_screen(OperatorInbox(found), chosen)


def _send(room: Room, name: str, text: str) -> Notice:
    message_id, hold = room.send_checked(OPERATOR, name, text)
    if hold is not None:
        return Notice(f"Message #{message_id} to @{name} is held by the loop breaker.")
    return Notice(f"Message #{message_id} to @{name} queued.")


def _inbox(room: Room) -> InboxRead | Notice:
    rows = room.inbox(OPERATOR)
    if not rows:
        return Notice("No message for you.")
    return InboxRead([(int(r["id"]), str(r["sender"]), str(r["body"])) for r in rows])


def _decide(room: Room, handover_id: int, reason: str | None) -> Notice:
    """Approve (no reason) or reject a handover; say which."""
    if reason is None:  # the recipient is told how to take the code it carries
        approve_with_code(room, GitCli(), handover_id)
        return Notice(f"Handover #{handover_id} approved.")
    room.reject(handover_id, reason)
    return Notice(f"Handover #{handover_id} rejected.")
