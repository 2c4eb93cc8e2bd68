"""Delivery through Claude Code's messaging socket, for the deliverer.

Where a recipient's client offers the socket (``core.native.native_refusal``) and the
room's setting allows it (``delivery_transport``: native-first by default, tmux, native),
the nudge line goes through the socket instead of the keyboard: nothing is typed, no
pane is needed. The recipient's UserPromptSubmit hook receipts it exactly as it does a
typed nudge; the client's own statuses come back to the room's socket and are recorded:
held (its user decides; the room shows why), denied, expired and dropped (failed, nudged
again later within the bound), refused (the pane is used instead). Claude Code sends
none for a message it takes at once (2.1.330, 2.1.332): the hook's receipt is the only
confirmation there. A socket that refuses or vanishes mid-send falls back to the pane,
or holds the messages under native only. A session that has just registered is given a
moment to publish its socket (``core.native.socket_pending``). The room never asks a
client to say when it is idle: the client would show that request to its agent; the
deliverer's healer reads the client's registry instead. Nothing is delivered twice:
receipts name message ids and count once.
"""

from __future__ import annotations

import atexit
import os
import sys
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING

from agent_room.adapters.claude_native import FileRegistry, claude_dir
from agent_room.adapters.claude_peer import PeerSocket, socket_folder
from agent_room.adapters.processes import SystemProbe
from agent_room.core.delivery import Action, OpenNudge, decide
from agent_room.core.native import (
    DEFAULT_PREFERENCE,
    SETTING,
    NativeSession,
    Outcome,
    Preference,
    Receipt,
    ReceiptKind,
    Route,
    choose_route,
    native_refusal,
    receipt_outcome,
    socket_pending,
    user_frame,
)
from agent_room.core.ports import NativeRegistry, NativeTransport
from agent_room.room.service import Room
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.prompts import nudge_text
from agent_room.turn.room.gate import prompt_refusal
from agent_room.turn.store.native import NativeStore
from agent_room.turn.store.wake import poke
from agent_room.workers.waiting import waiting_for

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

FALLBACK_FOR = 30.0
"""Seconds a recipient whose socket failed or refused is reached through its pane."""
IGNORED_LOGGED = 5
"""Ignored lines from the socket written to the audit log per pass at most."""


class NativeDelivery:
    """The native transport's part of one deliverer (owned by its thread)."""

    def __init__(
        self,
        room: Room,
        registry: NativeRegistry,
        transport: NativeTransport,
        *,
        uid: int | None = None,
        fallback_for: float = FALLBACK_FOR,
    ) -> None:
        self.room = room
        self.store = room.store
        self.sends = NativeStore(room.store)
        self.registry = registry
        self.transport = transport
        self.uid = os.getuid() if uid is None else uid
        self.fallback_for = fallback_for
        self.preference = str(DEFAULT_PREFERENCE)
        self.failing: dict[str, tuple[float, str]] = {}
        """Session id -> (until, why): its socket failed; the pane meanwhile."""
        self._open_after = float("-inf")

    def begin_pass(self, now: float) -> None:
        """Read the setting and record what came back to the room's socket."""
        preference = SettingsStore(self.store).get(SETTING)
        self.preference = str(preference or DEFAULT_PREFERENCE)
        logged = 0
        for item in self.transport.receipts():
            why = item if isinstance(item, str) else self._absorb(item, now)
            if why and logged < IGNORED_LOGGED:
                logged += 1
                self.store.logevent("native.ignored", "room", at=now, data={"reason": why})

    def _absorb(self, receipt: Receipt, now: float) -> str | None:
        if receipt.kind is ReceiptKind.IDLE:  # it woke the deliverer: that was its use
            return None
        found = self.sends.set_status(
            receipt.orig_msg_id,
            receipt.status,
            receipt.reason,
            sender_socket=receipt.sender_socket,
            at=now,
        )
        return None if found else "a receipt for no frame the room sent to that socket"

    def capability(self, target: Row, now: float) -> tuple[NativeSession | None, str | None]:
        """The recipient's registry entry, and why its socket cannot be used (or None)."""
        session_id = str(target["session_id"] or "")
        failing = self.failing.get(session_id)
        if failing is not None and failing[0] > now:
            return None, failing[1]
        pid = target["pid"]
        entry = self.registry.entry(int(pid)) if pid else None
        if entry is not None and (
            entry.session_id != session_id
            or (target["pid_start"] is not None and entry.proc_start != target["pid_start"])
        ):
            entry = None  # another session of that process (a /clear), or a reused pid
        facts = self.registry.socket_facts(entry.socket) if entry and entry.socket else None
        refusal = native_refusal(entry, facts, self.uid)
        if refusal is None and self.transport.socket is None:
            refusal = self._listen(now)
        return entry, refusal

    def _socket_pending(self, target: Row, now: float) -> bool:
        """Whether a session that registered a moment ago may still publish its socket:
        Claude Code's SessionStart hook runs before it writes its registry entry (about
        0.45 s with 2.1.330), and a message waiting then would be typed (``SOCKET_WAIT``
        at most; a session that had a turn without an entry has no socket)."""
        if self.preference == Preference.TMUX:
            return False
        session_id = str(target["session_id"] or "")
        return socket_pending(
            agent=str(target["agent"]),
            state=str(target["state"]),
            state_since=float(target["updated_at"]),
            had_turn=bool(session_id and self.store.turns(session_id, limit=1)),
            now=now,
        )

    def _listen(self, now: float) -> str | None:
        """Become a peer of the clients, once one of them is reachable (the active
        deliverer only); why not, if it cannot (tried again later)."""
        if self.preference == Preference.TMUX or now < self._open_after:
            return "the room is not listening on a socket of its own"
        try:
            self.transport.open()
        except OSError as exc:
            self._open_after = now + self.fallback_for
            self.store.logevent("native.unavailable", "room", at=now, data={"reason": str(exc)})
            return f"the room cannot listen on a socket of its own ({exc})"
        return None

    def serve(self, target: Row, now: float, *, receipt_timeout: float, retry_after: float) -> bool:
        """Serve one recipient through its socket; False to leave it to the pane."""
        name = str(target["name"])
        nudge = self.store.open_nudge(name)
        sent = self.sends.latest_for_nudge(int(nudge["id"])) if nudge else None
        if nudge is not None and sent is None:
            return False  # typed into the pane: the pane's path sees it through
        entry, refusal = self.capability(target, now)
        delivered_at = None
        if sent is not None and nudge is not None and sent["status"]:
            outcome, note = receipt_outcome(str(sent["status"]), str(sent["reason"] or ""))
            ids = tuple(nudge["message_ids"])
            if outcome is Outcome.DELIVERED:
                delivered_at = float(sent["status_at"])
            if outcome is Outcome.HOLD:
                self.store.set_note(name, note, at=now)
                return True
            if outcome is Outcome.FAIL:
                self.store.fail_nudge(int(nudge["id"]), ids, note, at=now)
                self.store.set_note(name, "", at=now)
                return True
            if outcome is Outcome.FALLBACK:
                self.store.close_nudge(int(nudge["id"]), "refused")
                self._fail_over(target, note, now)
                nudge, refusal = None, note
        if entry is None and nudge is None and self._socket_pending(target, now):
            self.store.set_note(name, "waiting for its client's messaging socket", at=now)
            return True
        route, held = choose_route(self.preference, refusal)
        if route is Route.TMUX:
            return False  # an open native nudge there is retyped by the pane's path
        if route is Route.HOLD:
            self.store.set_note(name, held, at=now)
            return True
        return self._decide(
            target, entry, nudge, now, receipt_timeout, retry_after, delivered_at=delivered_at
        )

    def _decide(
        self,
        target: Row,
        entry: NativeSession | None,
        nudge: Row | None,
        now: float,
        receipt_timeout: float,
        retry_after: float,
        *,
        delivered_at: float | None = None,
    ) -> bool:
        """What to do for one recipient. ``delivered_at``: when its client said it took
        the frame (its user may have held it for long): the hook's receipt is awaited from
        then, not from the try, or a pass woken by that status would send it again."""
        name = str(target["name"])
        ids, failed, sender_of, nudge = waiting_for(self.store, name, nudge)
        decision = decide(
            state=str(target["state"]),
            queued=ids,
            open_nudge=None
            if nudge is None
            else OpenNudge(
                nudge["message_ids"],
                max(float(nudge["last_try"]), delivered_at or 0.0),
                nudge["enters"],
            ),
            refusal=None,  # nothing is typed: no pane, dialog or prompt to mind
            has_pane=True,
            now=now,
            receipt_timeout=receipt_timeout,
            failed=failed,
            retry_after=retry_after,
        )
        sent = True
        if decision.action is Action.NUDGE and entry is not None:
            senders = [sender_of[i] for i in decision.message_ids]
            held = prompt_refusal(self.room, name, senders, now)
            if held is not None:  # a spent budget or the turn breaker: no prompt
                self.store.set_note(name, held, at=now)
                return True
            text = nudge_text(senders, decision.message_ids)
            nudge_id = self.store.record_nudge(
                name, target["session_id"], decision.message_ids, text, at=now
            )
            sent = self._send(target, entry, nudge_id, text, now)
        elif decision.action is Action.ENTER and nudge is not None and entry is not None:
            sent = self._send(target, entry, int(nudge["id"]), str(nudge["text"]), now)
            self.store.nudge_retried(int(nudge["id"]), at=now)  # sent again: no Enter to press
        elif decision.action is Action.FAIL and nudge is not None:
            self.store.fail_nudge(int(nudge["id"]), decision.message_ids, decision.note, at=now)
        if not sent:  # the socket failed: the pane this pass, or held under native only
            route, held = choose_route(self.preference, self.failing[str(target["session_id"])][1])
            if route is Route.HOLD:
                self.store.set_note(name, held, at=now)
                return True
            return False
        note = decision.note if decision.action is Action.HOLD else ""
        self.store.set_note(name, note, at=now)
        return True

    def _send(
        self, target: Row, entry: NativeSession, nudge_id: int, text: str, now: float
    ) -> bool:
        """Send a nudge line through the recipient's socket; False (the nudge closed
        unsent, the socket marked failing) when it refuses or is gone."""
        assert entry.socket is not None
        assert self.transport.socket is not None
        native_id = str(uuid.uuid4())
        self.sends.record_send(
            native_id,
            nudge_id=nudge_id,
            recipient=str(target["name"]),
            session_id=target["session_id"],
            socket=entry.socket,
            at=now,
        )
        frame = user_frame(native_id, text, from_socket=self.transport.socket)
        try:
            token = self.registry.peer_token(entry.pid, entry.socket)
            self.transport.send(entry.socket, frame, token=token)
        except OSError as exc:
            self.store.close_nudge(nudge_id, "unsent")
            self._fail_over(target, f"its messaging socket failed ({exc.strerror or exc})", now)
            return False
        return True

    def _fail_over(self, target: Row, why: str, now: float) -> None:
        session_id = str(target["session_id"])
        self.failing[session_id] = (now + self.fallback_for, why)
        self.store.logevent(
            "native.fallback", "room", at=now, subject=str(target["name"]), data={"reason": why}
        )


def native_delivery(room: Room, environ: Mapping[str, str]) -> NativeDelivery | None:
    """The native transport for a deliverer on this system (None where the clients have
    no messaging socket); its peer opens on the first active pass and closes at exit."""
    if not sys.platform.startswith("linux"):
        return None
    home = room.home
    registry = FileRegistry(claude_dir(environ), SystemProbe())
    peer = PeerSocket(
        registry, folder=socket_folder(environ), cwd=home, on_receipt=lambda: poke(home)
    )
    atexit.register(peer.close)
    return NativeDelivery(room, registry, peer)
