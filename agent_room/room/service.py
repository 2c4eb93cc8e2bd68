"""``Room``: join, leave, send, hand over, approve, reject, read.

Knows the room's rules (directed messages only, held handovers, who may send) and
nothing of how the entry points talk to people.
"""

from __future__ import annotations

import time

from agent_room.core.bodies import DEFAULT_BODY_LIMIT, check_body
from agent_room.core.errors import BadInput, NotFound, Refused, UnknownName
from agent_room.core.names import OPERATOR, ROOM, is_pane_id, parse_name
from agent_room.store.home import room_home
from agent_room.store.sqlite import SqliteStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from agent_room.core.enums import HandoverState
    from agent_room.core.handover import HandoverFields
    from agent_room.core.models import AuditEvent, LinkView, Message, Session, TimerView
    from agent_room.core.ports import Clock
    from agent_room.core.worktrees import CodeRef
    from agent_room.store.sqlite_base import Row

CHAT = "chat"
"""``MessageKind.CHAT``, spelled out: ``agent-room send`` starts every delivery and must
not load ``enum`` for it (a test holds the two equal). The handover rules, which do,
load when a handover is handled."""


class Room:
    """One room: a store plus the rules. Cheap to create; one per process is typical."""

    def __init__(
        self,
        store: SqliteStore,
        *,
        clock: Clock = time.time,
        body_limit: int = DEFAULT_BODY_LIMIT,
        handover_ttl: float | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.body_limit = body_limit
        self._handover_ttl = handover_ttl

    @property
    def handover_ttl(self) -> float:
        """Seconds a handover waits for a decision (``core.handover.DEFAULT_HANDOVER_TTL``)."""
        if self._handover_ttl is None:
            from agent_room.core.handover import DEFAULT_HANDOVER_TTL

            self._handover_ttl = DEFAULT_HANDOVER_TTL
        return self._handover_ttl

    @classmethod
    def open(cls, environ: Mapping[str, str], *, timeout: float = 10.0) -> Room:
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
        from agent_room.store.loops import LoopStore

        sender, recipient = self.check_pair(sender, recipient)
        body = check_body(body, limit=self.body_limit)
        return LoopStore(self.store).send(CHAT, sender, recipient, body, at=self.clock())

    def send_handover(
        self,
        sender: str,
        recipient: str,
        *,
        fields: HandoverFields | None = None,
        body: str | None = None,
        code: CodeRef | None = None,
    ) -> int:
        """Hold a handover for the operator's decision; return its id.

        With ``fields`` the body is seed 004's template; otherwise ``body`` is taken as the
        sender wrote it. ``code`` (the sender's branch and commit) is kept beside the
        fields, for the preview and the recipient's instructions on approval.
        """
        from agent_room.core.enums import MessageKind
        from agent_room.core.handover import render_handover

        sender, recipient = self.check_pair(sender, recipient)
        if fields is not None:
            text = render_handover(sender, fields.check())
            stored = fields.as_dict()
        elif body is not None:
            text, stored = body, {}
        else:
            raise BadInput("a handover needs a body or --changed and --todo")
        text = check_body(text, limit=self.body_limit)
        if code is not None:
            stored = {**stored, **code.as_fields()}
        return self.store.add_message(
            kind=MessageKind.HANDOVER,
            sender=sender,
            recipient=recipient,
            body=text,
            at=self.clock(),
            status="held",
            handover_fields=stored,
        )

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
        from agent_room.store.hosts import silent_hosts

        return silent_hosts(self.store, now)

    def follow_transcript(self, session_id: str, path: str) -> int:
        """Read what was appended to a session's transcript into the room's memory; return
        the items added (``Memory.follow``: what a checkpoint reads first)."""
        from agent_room.room.memory import Memory

        return Memory(self).follow(session_id, path)

    def who(self) -> list[dict[str, Any]]:
        """One object per session in the room, as ``who --json`` prints them."""
        from agent_room.room.roster import Roster

        return Roster(self).sessions()

    # -- handovers --------------------------------------------------------------------

    def _decide(self, message_id: int, target: HandoverState, reason: str | None) -> int:
        from agent_room.core.enums import HandoverState
        from agent_room.core.handover import check_transition

        self.expire_handovers()
        row = self.store.handover(message_id)
        if row is None:
            raise NotFound(f"no handover #{message_id}")
        check_transition(message_id, HandoverState(row["state"]), target)
        notice = _decision_notice(message_id, row["recipient"], target, reason)
        notice_id = self.store.decide_handover(
            message_id,
            state=target,
            expected=row["state"],
            at=self.clock(),
            by=OPERATOR,
            reason=reason,
            notice=notice,
        )
        if notice_id is None:
            current = self.store.handover(message_id)
            state = current["state"] if current else "gone"
            raise Refused(f"handover #{message_id} was decided meanwhile: it is {state}")
        return notice_id

    def approve(self, message_id: int) -> int:
        """Release a pending handover to its recipient; tell the sender. Return the notice id.

        The context prepared from the sender's transcript travels in the released body.
        """
        from agent_room.core.enums import HandoverState
        from agent_room.room.memory import Memory

        Memory(self).attach_quietly(message_id)
        return self._decide(message_id, HandoverState.APPROVED, None)

    def reject(self, message_id: int, reason: str) -> int:
        """Refuse a pending handover with a reason the sender receives."""
        if not reason.strip():
            raise BadInput("a rejection needs a reason: --reason TEXT")
        from agent_room.core.enums import HandoverState

        return self._decide(message_id, HandoverState.REJECTED, reason.strip())

    def expire_handovers(self) -> list[int]:
        """Expire handovers pending longer than the time to live; return their ids."""
        from agent_room.core.enums import HandoverState

        deadline = self.clock() - self.handover_ttl
        expired = []
        for row in self.store.pending_handovers():
            if row["requested_at"] <= deadline:
                notice = _decision_notice(
                    row["message_id"], row["recipient"], HandoverState.EXPIRED, None
                )
                decided = self.store.decide_handover(
                    row["message_id"],
                    state=HandoverState.EXPIRED,
                    expected="pending",
                    at=self.clock(),
                    by=ROOM,
                    reason="no decision in time",
                    notice=notice,
                )
                if decided is not None:
                    expired.append(int(row["message_id"]))
        return expired

    def pending_handovers(self) -> list[Row]:
        """Handovers waiting for the operator."""
        self.expire_handovers()
        return self.store.pending_handovers()

    def handover_cycles(self, handovers: Sequence[Row]) -> dict[int, tuple[str, ...]]:
        """The cycle (A -> B -> ... -> A) each handover closes over the handovers still
        pending or approved within the time to live (``core.cycles``), by message id.

        One answer for the sender (``send --handover``), ``handovers`` and the console.
        """
        from agent_room.core.cycles import cycle_warnings
        from agent_room.store.views import recent_handovers

        recent = recent_handovers(self.store, self.clock() - self.handover_ttl)
        return cycle_warnings(
            [(int(r["message_id"]), r["sender"], r["recipient"]) for r in handovers],
            [(int(r["message_id"]), r["sender"], r["recipient"]) for r in recent],
        )

    # -- typed views ------------------------------------------------------------------

    def messages(self, limit: int = 20) -> list[Message]:
        """``history`` as validated models."""
        from agent_room.core.models import Message

        return [Message.from_row(r) for r in self.history(limit)]

    def sessions(self) -> list[Session]:
        """The sessions in the room as validated models."""
        from agent_room.core.models import Session

        return [Session.from_row(r) for r in self.store.members()]

    def links(self, *, live_only: bool = False) -> list[LinkView]:
        """The room's links (newest first) as validated models, for the console."""
        from agent_room.core.models import LinkView
        from agent_room.room.links import Links

        return [LinkView.from_row(r) for r in Links(self).links(live_only=live_only)]

    def timers(self, *, pending_only: bool = True) -> list[TimerView]:
        """The room's timers as validated models."""
        from agent_room.core.models import TimerView
        from agent_room.room.links import Links

        return [TimerView.from_row(r) for r in Links(self).timers(pending_only=pending_only)]

    def audit(self, *, after: int = 0, limit: int = 1000) -> list[AuditEvent]:
        """The audit log as validated models."""
        from agent_room.core.models import AuditEvent

        return [AuditEvent.from_row(r) for r in self.store.events(after=after, limit=limit)]


def party(raw: str) -> str:
    """A name that may speak or be written to: a member's, or ``operator`` (the person
    at the console, a named party of the room with no session)."""
    name = parse_name(raw, allow_reserved=True)
    return name if name == OPERATOR else parse_name(raw)


def _decision_notice(
    message_id: int, recipient: str, state: HandoverState, reason: str | None
) -> str:
    from agent_room.core.enums import HandoverState

    text = f"Handover #{message_id} to @{recipient} was {state.value} by the operator."
    if state is HandoverState.EXPIRED:
        text = f"Handover #{message_id} to @{recipient} expired without a decision."
    if reason:
        text += f"\nReason: {reason}"
    return text
