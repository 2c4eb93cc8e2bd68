"""``RoomWork``: blocking room work for the console, written once.

Every console action that reads or changes the room (approve, reject, write, rename,
enter, a diff, the usage screen ...) opens its own connection in a thread worker, runs
one job, closes the connection, and says how it went. This is the one place that does
it: the job returns the message to post (or nothing), a ``RoomError`` becomes an error
toast, and a job that changed the room asks for a re-read. Worker threads never touch
the app's or a widget's state: they only post messages.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker

from agent_room.turn.core.errors import RoomError
from agent_room.ui.messages import Notice, RefreshWanted

if TYPE_CHECKING:  # the room service loads beside the first paint, in its own thread
    from agent_room.room.service import Room

T = TypeVar("T")

Job = Callable[["Room"], Message | None]
"""What runs in the thread, on a fresh connection: returns the message to post, if any."""


class RoomWork:
    """Runs jobs against the room in thread workers of the app, posting what they find."""

    def __init__(self, app: App[int], open_room: Callable[[], Room]) -> None:
        self._app = app
        self.open_room = open_room
        """A fresh connection to the room, for one thread (closed by its user)."""

    def run(
        self,
        job: Job,
        *,
        group: str,
        exclusive: bool = False,
        to: MessagePump | None = None,
        refresh: bool = False,
        failed: str = "{}",
    ) -> Worker[None]:
        """Run ``job`` in a thread worker; post its message to ``to`` (the app unless
        given). A ``RoomError`` is shown as ``failed`` (``{}`` is the error); with
        ``refresh`` the room is read again afterwards, whatever happened."""
        return self._app.run_worker(
            partial(self._run, job, to or self._app, refresh, failed),
            group=group,
            exclusive=exclusive,
            thread=True,
            exit_on_error=False,
        )

    def read(self, job: Callable[[Room], T]) -> T:
        """Run ``job`` on a fresh connection in the calling thread (already a worker)."""
        room = self.open_room()
        try:
            return job(room)
        finally:
            room.close()

    def _run(self, job: Job, to: MessagePump, refresh: bool, failed: str) -> None:
        try:
            found = self.read(job)
        except RoomError as exc:
            found = Notice(failed.format(exc), severity="error")
            to = self._app
        try:
            if found is not None:
                to.post_message(found)
        finally:
            if refresh:
                self._app.post_message(RefreshWanted())
