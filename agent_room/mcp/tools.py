"""The room's tools, each a thin call into the room service the command line calls.

A tool gets who is calling from its ``Caller`` (the session the server serves), opens the
room for the call and closes it, and answers in text: what ``agent-room`` would have
printed. A room error (a bad name, a refused close, a missing link) becomes the tool's
error with the same one-line message, never a traceback.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from agent_room.adapters.processes import SystemProbe
from agent_room.core.ports import HeadlessClient
from agent_room.core.transcript import render_turns
from agent_room.room.intercom import Asker, Intercom
from agent_room.room.links import Links
from agent_room.room.outbox import SendRequest, send
from agent_room.room.peek import peek
from agent_room.room.roster import Roster
from agent_room.room.service import Room
from agent_room.turn.core.errors import BadInput, RoomError
from agent_room.turn.core.format import format_terminal_messages
from agent_room.turn.core.printable import printable
from agent_room.turn.core.timers import format_duration
from agent_room.turn.room.registry import Registry

NO_BODY = "no message body: give the text to send"
"""``send_message`` without text (the command line names TEXT, --file and stdin)."""
ASK_TIMEOUT = 600.0
"""Seconds an ``ask`` waits for the other agent (the command line's default)."""


class ToolFailed(Exception):
    """A tool's refusal, in one printable line (the server turns it into a tool error)."""


class Caller(Protocol):
    """Who is calling: the name of the agent the server serves for this request."""

    def __call__(self, room: Room) -> str: ...


ClientFactory = Callable[[Room, str, str, Asker], HeadlessClient]
"""Builds the headless client an ``ask`` of a repository runs (room, repo, label, asker):
the command line's, passed in."""


class Rooms:
    """One open room per thread of the server, kept between calls: opening and closing
    the room costs about twenty times a send (closing checkpoints the database), and the
    SDK runs each call in a thread of a small pool."""

    def __init__(self, environ: Mapping[str, str], *, timeout: float = 10.0) -> None:
        self.environ = environ
        self.timeout = timeout
        """How long one statement waits for a busy room."""
        self._local = threading.local()
        self._opened = False
        """Whether a thread opened the room: after that, a room removed is not made anew."""

    def get(self) -> Room:
        """This thread's room (``RoomGone`` once the room this server used is removed)."""
        room: Room | None = getattr(self._local, "room", None)
        if room is None:
            room = self._local.room = Room.open(
                self.environ, timeout=self.timeout, long_lived=True, create=not self._opened
            )
            self._opened = True
        return room

    def drop(self) -> None:
        """Forget this thread's room (after a fault: the next call opens it again)."""
        room: Room | None = getattr(self._local, "room", None)
        self._local.room = None
        if room is not None:
            room.close()


@dataclass(frozen=True)
class RoomTools:
    """The tools of one room for one caller (``caller`` resolves per request)."""

    rooms: Rooms
    caller: Caller
    ask_client: ClientFactory | None = None
    """Without one, ``ask`` is refused (a server that cannot start clients)."""

    @contextmanager
    def _room(self) -> Iterator[Room]:
        try:
            yield self.rooms.get()
        except RoomError as exc:
            raise ToolFailed(printable(str(exc))) from None
        except Exception:
            self.rooms.drop()  # a database fault: a fresh connection next time
            raise

    def send_message(self, request: SendRequest) -> str:
        """Send as the caller (``agent-room send``): a message, a handover, a link."""
        if request.body is not None and not request.body.strip():
            request.body = None  # (the command line's words: none given)
        with self._room() as room:
            return send(room, self.caller(room), request, no_body=NO_BODY).text()

    def read_inbox(self, *, peek_only: bool = False) -> str:
        """The caller's unread messages (``agent-room inbox``), marked read unless peeking."""
        with self._room() as room:
            rows = room.inbox(self.caller(room), peek=peek_only)
        if not rows:
            return "no new messages"
        return printable(format_terminal_messages(rows), multiline=True)

    def who(self) -> str:
        """The sessions in the room, as ``agent-room who --json``."""
        with self._room() as room:
            self.caller(room)  # a stranger is refused here as everywhere
            Registry(room, SystemProbe()).refresh()
            sessions = Roster(room).sessions()
        if not sessions:
            return "nobody is in the room"
        return json.dumps(sessions, ensure_ascii=False, default=str)

    def get_session_data(self, name: str, *, turns: int = 3, tools: bool = False) -> str:
        """A peer's last turns from its transcript (``agent-room peek``): the caller sees
        itself and the peers it has a live link with."""
        if not 1 <= turns <= 50:
            raise ToolFailed("turns must be between 1 and 50")
        with self._room() as room:
            seen = peek(room, name, viewer=self.caller(room), turns=turns)
        tail = seen.tail
        count = len(tail.turns)
        header = (
            f"@{seen.name} ({seen.state}) · session {seen.session_id} · last {count} turn"
            f"{'s' if count != 1 else ''}"
        )
        if not tail.turns:
            return printable(f"{header}\n@{seen.name} has no turns in its transcript yet")
        body = render_turns(tail.turns, tools=tools)
        return printable(f"{header}\n\n{body}", multiline=True)

    def set_timer(self, intent: str, duration: str, text: str) -> str:
        """A timer with intent for the caller (``agent-room timer``)."""
        with self._room() as room:
            name = self.caller(room)
            timer = Links(room).set_timer(name, intent, duration, text)
        wait = format_duration(timer["due_at"] - timer["created_at"])
        return f"timer #{timer['id']} ({timer['intent']}) for @{name} fires in {wait}"

    def ask(
        self,
        repo: str,
        question: str,
        *,
        new: bool = False,
        resume: str | None = None,
        max_turns: int | None = None,
    ) -> str:
        """Put ``question`` to a headless agent in ``repo`` (``agent-room ask``); its answer."""
        if self.ask_client is None:
            raise ToolFailed("this server cannot start clients: run `agent-room ask` instead")
        if new and resume:
            raise ToolFailed("new and resume cannot go together")
        with self._room() as room:
            intercom = Intercom(room)
            asker = intercom.asker({"AGENT_ROOM_NAME": self.caller(room)})
            try:
                _repo, label = intercom.repository(repo)
            except BadInput:
                label = "repo"  # the use case reports the bad REPO, and records it
            intercom.client = self.ask_client(room, repo, label, asker)
            record: dict[str, Any] = intercom.ask(
                repo,
                question,
                asker,
                max_turns=max_turns,
                timeout=ASK_TIMEOUT,
                force_new=new,
                resume_id=resume,
            )
        return str(record["result"])
