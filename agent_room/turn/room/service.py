"""``RoomCore``: join, leave, send, read: the room's rules that a turn or a send applies.

Knows the room's rules (directed messages only, who may send) and nothing of how the
entry points talk to people. The handover decisions and the typed views are
``agent_room.room.Room``'s, which extends this class outside the turn path.
"""

from __future__ import annotations

import time

from agent_room.turn.core.bodies import DEFAULT_BODY_LIMIT, check_body
from agent_room.turn.core.errors import BadInput, UnknownName
from agent_room.turn.core.names import OPERATOR, is_pane_id, parse_name
from agent_room.turn.store.home import room_home
from agent_room.turn.store.sqlite import SqliteStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Self

    from agent_room.turn.store.sqlite_base import Row

CHAT = "chat"
"""``MessageKind.CHAT``, spelled out: ``agent-room send`` starts every delivery and must
not load ``enum`` for it (a test holds the two equal)."""


class RoomCore:
    """One room: a store plus the rules a turn applies. Cheap to create."""

    def __init__(
        self,
        store: SqliteStore,
        *,
        clock: Callable[[], float] = time.time,
        body_limit: int = DEFAULT_BODY_LIMIT,
    ) -> None:
        self.store = store
        self.clock = clock
        self.body_limit = body_limit

    @classmethod
    def open(cls, environ: Mapping[str, str], *, timeout: float = 10.0) -> Self:
        """Open the room named by ``$AGENT_ROOM_HOME`` (default ``~/.agent-room``)."""
        return cls(SqliteStore(room_home(environ), timeout=timeout))

    @property
    def home(self) -> str:
        """The room directory."""
        return self.store.home

    def close(self) -> None:
        """Release the database connection."""
        self.store.close()

    # -- identity ---------------------------------------------------------------------

    def identify(self, *, env_name: str | None, pane: str | None, as_name: str | None) -> str:
        """Who is speaking: ``AGENT_ROOM_NAME``, else the pane's session, else ``--as``.

        An agent launched as a name keeps it in its environment after a rename: a name
        nobody holds any more stands for the one it was renamed to."""
        if env_name:
            name = parse_name(env_name)
            if as_name and party(as_name) != name:
                raise BadInput(
                    f"--as {as_name} disagrees with AGENT_ROOM_NAME={env_name}, which names"
                    " who speaks here: drop --as, or unset AGENT_ROOM_NAME"
                )
            if self.store.holder(name) is None:
                return self.store.renamed_to(name) or name
            return name
        if pane:
            row = self.store.holder_of_pane(pane)
            if row:
                return str(row["name"])
        if as_name:
            return party(as_name)
        raise BadInput(
            "cannot tell who you are: set AGENT_ROOM_NAME, run in a registered tmux pane,"
            " or pass --as NAME"
        )

    def require_member(self, name: str) -> Row:
        """The session holding ``name``; ``UnknownName`` naming who is in the room if none."""
        row = self.store.holder(name)
        if row is None:
            present = self.store.member_names()
            listing = ", ".join(f"@{n}" for n in present) if present else "nobody"
            renamed = self.store.renamed_to(name)
            if renamed:
                raise UnknownName(f"@{name} was renamed: it is @{renamed} now")
            raise UnknownName(f"nobody named @{name} is in the room (in the room: {listing})")
        return row

    # -- membership -------------------------------------------------------------------

    def join(
        self,
        name: str,
        *,
        pane: str | None = None,
        agent: str = "claude",
        tmux_socket: str | None = None,
        pid: int | None = None,
        pid_start: int | None = None,
    ) -> Row:
        """Register a name by hand, as seed 004's ``join.sh``; ``pid`` and ``pid_start``:
        the process ``agent-room start`` started in the pane.

        A pane holds one session: naming a pane whose session is running under another
        name renames that session (the row then carries ``renamed_from``)."""
        canonical = parse_name(name)
        if pane is not None and not is_pane_id(pane):
            raise BadInput(f"invalid pane {pane!r}: use a tmux pane id such as %3")
        held = self.store.holder_of_pane(pane) if pane is not None else None
        if held is not None and held["state"] != "ended" and held["name"] != canonical:
            row = self.rename(str(held["name"]), canonical)
            return {**row, "renamed_from": held["name"]}
        return self.store.join(
            canonical,
            pane=pane,
            agent=agent,
            tmux_socket=tmux_socket,
            at=self.clock(),
            pid=pid,
            pid_start=pid_start,
        )

    def rename(self, old: str, new: str, *, by: str = OPERATOR) -> Row:
        """Rename a session; what waits for it follows (``store.rename``). The row has
        ``moved``: how many waiting messages went along."""
        old, new = parse_name(old), parse_name(new)
        if old == new:
            raise BadInput(f"@{old} is already named {new}")
        self.require_member(old)
        row, moved = self.store.rename(old, new, by=by, at=self.clock())
        return {**row, "moved": moved}

    def leave(self, name: str) -> None:
        """Remove a name from the room; its messages stay in the history."""
        self.store.leave(parse_name(name), at=self.clock())

    # -- messages ---------------------------------------------------------------------

    def check_pair(self, sender: str, recipient: str) -> tuple[str, str]:
        """Both names checked; the operator is a party of the room without a session."""
        sender = party(sender)
        recipient = party(recipient)
        if sender != OPERATOR:
            self.require_member(sender)
        if recipient == sender:
            raise BadInput("a message to yourself goes nowhere: name another agent")
        if recipient != OPERATOR:
            self.require_member(recipient)
        return sender, recipient

    def send(self, sender: str, recipient: str, body: str) -> int:
        """Queue a directed chat message; return its id (held in a loop: ``send_checked``)."""
        return self.send_checked(sender, recipient, body)[0]

    def send_checked(
        self, sender: str, recipient: str, body: str
    ) -> tuple[int, tuple[int, tuple[str, ...]] | None]:
        """Queue a directed chat message, or hold it when it runs in a loop among agents
        (``core.loops``); return its id and the loop hold (id, cycle), if any."""
        from agent_room.turn.store.loops import LoopStore

        sender, recipient = self.check_pair(sender, recipient)
        body = check_body(body, limit=self.body_limit)
        return LoopStore(self.store).send(CHAT, sender, recipient, body, at=self.clock())

    def inbox(self, name: str, *, peek: bool = False) -> list[Row]:
        """The unread messages of ``name``, oldest first; marked read unless ``peek``."""
        name = party(name)
        if name != OPERATOR:
            self.require_member(name)
        if peek:
            return self.store.unread(name)
        return self.store.take_unread(name, at=self.clock())

    def history(self, limit: int = 20) -> list[Row]:
        """The last ``limit`` messages of the room, oldest first."""
        if limit < 1:
            raise BadInput("history needs a positive count")
        return self.store.history(limit)

    def silent_hosts(self, now: float) -> set[str]:
        """Hosts of a room on PostgreSQL whose watcher has gone silent (none on SQLite)."""
        if self.store.engine != "postgresql":
            return set()
        from agent_room.turn.store.hosts import silent_hosts

        return silent_hosts(self.store, now)


def party(raw: str) -> str:
    """A name that may speak or be written to: a member's, or ``operator`` (the person
    at the console, a named party of the room with no session)."""
    name = parse_name(raw, allow_reserved=True)
    return name if name == OPERATOR else parse_name(raw)
