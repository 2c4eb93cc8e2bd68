"""App-wide messages: what the background workers and the widgets tell the app.

Workers talk to the app only through these (``post_message`` is thread-safe); widget-
owned messages are nested in their widgets.
"""

from __future__ import annotations

from textual.message import Message
from textual.notifications import SeverityLevel

from agent_room.core.enter import Plan
from agent_room.core.overlaps import CodeSnapshot
from agent_room.core.snapshot import RoomSnapshot


class SnapshotReady(Message):
    """A new picture of the room; a newer one replaces one not yet handled."""

    def __init__(self, snapshot: RoomSnapshot) -> None:
        self.snapshot = snapshot
        """The room at the time it was read."""
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        """Bursts collapse: only the latest snapshot matters."""
        return isinstance(message, SnapshotReady)


RETRYING = "retrying:"
"""How a worker's status begins while a fault lasts; the problem follows."""


class WorkerStatus(Message):
    """A background worker's state changed (shown in the status bar)."""

    def __init__(self, worker: str, status: str) -> None:
        self.worker = worker
        """``reader``, ``watcher`` or ``deliverer``."""
        self.status = status
        """A word or two: ``on``, ``active``, ``standby``, ``off``, ``error`` ..."""
        super().__init__()


class EnterPlanned(Message):
    """The plan for entering a session is ready to be carried out (or confirmed)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        """What to do; see ``core.enter``."""
        super().__init__()


class SessionChosen(Message):
    """Some view (the tree, the flow) points at a session: select it in the table."""

    def __init__(self, name: str) -> None:
        self.name = name
        """The session's ``@name``."""
        super().__init__()


class RefreshWanted(Message):
    """Something changed the room from inside the console: read it again now."""


class CodeReady(Message):
    """Every agent's changes, read again after a turn ended; a newer one replaces it."""

    def __init__(self, code: CodeSnapshot) -> None:
        self.code = code
        """Branches, changed files, overlaps and handover previews."""
        super().__init__()

    def can_replace(self, message: Message) -> bool:
        """Only the latest matters."""
        return isinstance(message, CodeReady)


class Notice(Message):
    """A toast for the operator, from a worker thread (the app shows it)."""

    def __init__(
        self,
        text: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        self.text = text
        """What to say; shown escaped (it may quote what agents wrote)."""
        self.title = title
        """The toast's title, if any."""
        self.severity = severity
        """``information``, ``warning`` or ``error``."""
        self.timeout = timeout
        """Seconds on screen (None: Textual's default)."""
        super().__init__()


class EnterRequested(Message):
    """Enter the session ``name`` (the app plans it in a thread)."""

    def __init__(self, name: str) -> None:
        self.name = name
        """The session's ``@name``."""
        super().__init__()


class InboxRead(Message):
    """The messages agents wrote to ``@operator``, read: show them to choose one."""

    def __init__(self, found: list[tuple[int, str, str]]) -> None:
        self.found = found
        """(id, sender, body) of each."""
        super().__init__()
