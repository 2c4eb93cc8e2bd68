"""``Room``: what the room does, for every entry point: join, leave, send, hand over,
approve, reject, read.

The rules a turn or a send applies are ``RoomCore``'s, on the fenced turn path
(``agent_room.turn``); this class adds the handover decisions, the room's memory and
roster, and the typed views that the console, the command line and the workers read.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from agent_room.core.enums import HandoverState, MessageKind
from agent_room.core.handover import (
    DEFAULT_HANDOVER_TTL,
    HandoverFields,
    check_transition,
    render_handover,
)
from agent_room.core.ports import Clock
from agent_room.core.worktrees import CodeRef
from agent_room.room.memory import Memory
from agent_room.room.roster import Roster
from agent_room.store.views import recent_handovers
from agent_room.turn.core.bodies import DEFAULT_BODY_LIMIT, check_body
from agent_room.turn.core.cycles import cycle_warnings
from agent_room.turn.core.errors import BadInput, NotFound, Refused, RoomUnavailable
from agent_room.turn.core.names import OPERATOR, ROOM
from agent_room.turn.room.service import RoomCore
from agent_room.turn.store.home import room_home
from agent_room.turn.store.sqlite import SqliteStore

if TYPE_CHECKING:  # a type alias only the checker knows
    from agent_room.store.psycopg_conn import PsycopgConnection
    from agent_room.turn.store.sqlite_base import Row


def connect_long_lived(url: str, *, timeout: float) -> PsycopgConnection:
    """A room on PostgreSQL for a process that keeps it open (the console, ``watch``, the
    MCP server): over psycopg (``store.psycopg_conn``), loaded only now, for a room on
    PostgreSQL (100-150 ms, and the ``postgres`` extra)."""
    try:
        from agent_room.store import psycopg_conn  # noqa: PLC0415 - PostgreSQL rooms only
    except ImportError as exc:
        raise RoomUnavailable(
            f"the room is on PostgreSQL and psycopg cannot be loaded ({exc}):"
            " pip install 'agent-room[postgres]'"
        ) from None
    return psycopg_conn.connect(url, timeout=timeout)


class Room(RoomCore):
    """One room: a store plus the rules. Cheap to create; one per process is typical."""

    def __init__(
        self,
        store: SqliteStore,
        *,
        clock: Clock = time.time,
        body_limit: int = DEFAULT_BODY_LIMIT,
        handover_ttl: float = DEFAULT_HANDOVER_TTL,
    ) -> None:
        super().__init__(store, clock=clock, body_limit=body_limit)
        self.handover_ttl = handover_ttl
        """Seconds a handover waits for a decision."""

    @classmethod
    def open(
        cls,
        environ: Mapping[str, str],
        *,
        timeout: float = 10.0,
        long_lived: bool = False,
        create: bool = True,
    ) -> Self:
        """Open the room named by ``$AGENT_ROOM_HOME`` (default ``~/.agent-room``).

        ``long_lived``: for a process that keeps the room open (the console, ``watch``,
        the MCP server), whose room on PostgreSQL is reached through psycopg; a short
        command's through the turn path's libpq binding, as a hook's. ``create``: False
        for a process opening the room again (a worker's fresh connection), which meets
        ``RoomGone`` once the room is removed rather than making it anew."""
        store = SqliteStore(
            room_home(environ),
            timeout=timeout,
            open_postgres=connect_long_lived if long_lived else None,
            create=create,
        )
        return cls(store)

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

    def follow_transcript(self, session_id: str, path: str) -> int:
        """Read what was appended to a session's transcript into the room's memory; return
        the items added (``Memory.follow``: what a checkpoint reads first)."""

        return Memory(self).follow(session_id, path)

    def who(self) -> list[dict[str, Any]]:
        """One object per session in the room, as ``who --json`` prints them."""

        return Roster(self).sessions()

    # -- handovers --------------------------------------------------------------------

    def _decide(self, message_id: int, target: HandoverState, reason: str | None) -> int:

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

        Memory(self).attach_quietly(message_id)
        return self._decide(message_id, HandoverState.APPROVED, None)

    def reject(self, message_id: int, reason: str) -> int:
        """Refuse a pending handover with a reason the sender receives."""
        if not reason.strip():
            raise BadInput("a rejection needs a reason: --reason TEXT")

        return self._decide(message_id, HandoverState.REJECTED, reason.strip())

    def expire_handovers(self) -> list[int]:
        """Expire handovers pending longer than the time to live; return their ids."""

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

        recent = recent_handovers(self.store, self.clock() - self.handover_ttl)
        return cycle_warnings(
            [(int(r["message_id"]), r["sender"], r["recipient"]) for r in handovers],
            [(int(r["message_id"]), r["sender"], r["recipient"]) for r in recent],
        )


def _decision_notice(
    message_id: int, recipient: str, state: HandoverState, reason: str | None
) -> str:

    text = f"Handover #{message_id} to @{recipient} was {state.value} by the operator."
    if state is HandoverState.EXPIRED:
        text = f"Handover #{message_id} to @{recipient} expired without a decision."
    if reason:
        text += f"\nReason: {reason}"
    return text
