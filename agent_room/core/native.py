"""Claude Code's own session registry and messaging socket, as the room understands them.

Pure. Recent clients (2.1.224 and later) write ``~/.claude/sessions/<pid>.json`` for
every running session and listen on a Unix socket for newline-delimited JSON messages,
with receipts sent back to the sender's own socket. Both are undocumented and
version-specific, so everything read here is checked, a protocol version the room does
not know is refused, and a fault leads back to the pane or to a held message with the
reason, never to a lost or doubled message. The adapters read the files and sockets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

PROTOCOL = 1
"""The ``peerProtocol`` / ``msgV`` the room speaks (Claude Code 2.1.330)."""
ROOM_PEER_NAME = "agent-room"
"""The name the room's peer goes by in the clients' ``ListAgents``."""
ROOM_PEER_MARK = "agentRoomPeer"
"""A field of the room's own registry entries: they are never listed as sessions."""
PEER_MODE = "prompting"
"""The permission-mode class the room asserts: a session in bypass mode holds its
messages for its user's approval, as it does for any prompting peer."""

NATIVE_STATES = frozenset({"idle", "busy", "waiting"})
BACKGROUND_STATES = frozenset({"working", "blocked", "done", "stopped", "failed"})


class Preference(StrEnum):
    """How the room reaches an agent (the room setting ``delivery_transport``)."""

    NATIVE_FIRST = "native-first"
    """Through the client's messaging socket where it offers one, else the pane."""
    TMUX = "tmux"
    """Always by typing a nudge into the pane."""
    NATIVE = "native"
    """Only through the socket: an agent without one keeps its messages, with the reason."""


SETTING = "delivery_transport"
"""The room setting that holds the ``Preference``."""
DEFAULT_PREFERENCE = Preference.NATIVE_FIRST


class Transport(StrEnum):
    """How one delivery was made."""

    NATIVE = "native"
    TMUX = "tmux"


@dataclass(frozen=True, slots=True)
class NativeSession:
    """One running session from Claude Code's registry (plugin or not)."""

    pid: int
    session_id: str
    cwd: str
    kind: str
    """``interactive`` or ``background``."""
    name: str | None = None
    status: str | None = None
    """``idle``, ``busy`` or ``waiting`` (None when the client does not say)."""
    waiting_for: str | None = None
    status_at: float | None = None
    """When the status last changed (``statusUpdatedAt``), seconds since the epoch."""
    started_at: float | None = None
    """Seconds since the epoch."""
    proc_start: int | None = None
    """Field 22 of ``/proc/PID/stat``: with the pid, the process's identity."""
    version: str | None = None
    peer_protocol: int | None = None
    socket: str | None = None
    tmux: str | None = None
    """``session:@window.%pane`` when the client runs in tmux."""
    job: str | None = None
    """A background session's short id (``claude attach`` takes it)."""
    job_state: str | None = None
    """A background session's state: working, blocked, done, stopped, failed."""
    room_peer: bool = False
    """One of the room's own peers, not an agent."""

    @property
    def pane(self) -> str | None:
        """The tmux pane id (``%N``), if the session runs in tmux."""
        if not self.tmux or ".%" not in self.tmux:
            return None
        pane = "%" + self.tmux.rsplit(".%", 1)[1]
        return pane if pane[1:].isdigit() else None

    @property
    def status_text(self) -> str:
        """The native status in a few words: ``waiting: permission prompt``."""
        status = self.status or "unknown"
        if status == "waiting" and self.waiting_for:
            status += f": {self.waiting_for}"
        if self.job_state:
            status += f" ({self.job_state})"
        return status


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) and value else None


def _number(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def parse_entry(data: object) -> NativeSession | None:
    """One registry file or ``agents --json`` entry; None for what is not a live session
    the room can show (a malformed file, a pre-warmed spare, a session moved to the
    background, whose pane now shows another session)."""
    if not isinstance(data, Mapping):
        return None
    pid = _number(data.get("pid"))
    session_id = _text(data, "sessionId")
    cwd = _text(data, "cwd")
    if pid is None or pid <= 0 or session_id is None or cwd is None:
        return None
    if data.get("spare") or data.get("parkedJobId"):
        return None
    kind = "background" if data.get("kind") in ("bg", "background") else "interactive"
    status = _text(data, "status")
    started = _number(data.get("startedAt"))
    status_at = _number(data.get("statusUpdatedAt"))
    state = _text(data, "state")
    return NativeSession(
        pid=pid,
        session_id=session_id,
        cwd=cwd,
        kind=kind,
        name=_text(data, "name"),
        status=status if status in NATIVE_STATES else None,
        waiting_for=_text(data, "waitingFor") if status == "waiting" else None,
        status_at=status_at / 1000 if status_at else None,
        started_at=started / 1000 if started else None,
        proc_start=_number(data.get("procStart")),
        version=_text(data, "version"),
        peer_protocol=_number(data.get("peerProtocol")),
        socket=_text(data, "messagingSocketPath"),
        tmux=_text(data, "tmux"),
        job=_text(data, "jobId") or _text(data, "id"),
        job_state=state if state in BACKGROUND_STATES else None,
        room_peer=bool(data.get(ROOM_PEER_MARK)),
    )


def parse_agents_json(text: str) -> list[NativeSession]:
    """The sessions in ``claude agents --json`` output (malformed entries skipped)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    return [s for s in (parse_entry(d) for d in data) if s is not None]


def room_state(session: NativeSession) -> str:
    """The room's session state for a native status (``core.enums.SessionState``)."""
    return session.status or "unknown"


@dataclass(frozen=True, slots=True)
class SocketFacts:
    """What ``stat`` says of a session's socket and its folder."""

    is_socket: bool
    uid: int
    mode: int
    dir_uid: int
    dir_mode: int


SOCKET_WAIT = 3.0
"""Seconds a message waiting for a Claude Code session that has just registered waits for
its messaging socket before it is typed (the client writes its registry entry about
0.45 s after the room's SessionStart hook)."""


def socket_pending(
    *, agent: str, state: str, state_since: float, had_turn: bool, now: float
) -> bool:
    """Whether a session without a registry entry may still publish its socket: a Claude
    Code session, idle since it registered, that has not had a turn, for ``SOCKET_WAIT``
    seconds at most (a client without one keeps no entry at all: then the pane)."""
    return (
        agent == "claude" and state == "idle" and not had_turn and now - state_since < SOCKET_WAIT
    )


def native_refusal(
    session: NativeSession | None, facts: SocketFacts | None, uid: int
) -> str | None:
    """Why the room cannot deliver through this session's socket; None when it can.

    The capability check: the registry's protocol fields, the socket present, owned by
    the user and private (as the client makes it: 0600 in a 0700 folder), so a message
    never goes to a socket someone else planted."""
    if session is None:
        return "its client keeps no native registry entry (no messaging socket)"
    if session.socket is None:
        return "its client offers no messaging socket"
    if session.peer_protocol != PROTOCOL:
        return f"its client speaks native protocol {session.peer_protocol}, not {PROTOCOL}"
    if facts is None:
        return "its messaging socket is gone"
    if not facts.is_socket:
        return "its messaging socket path is not a socket"
    if facts.uid != uid or facts.dir_uid != uid:
        return "its messaging socket belongs to another user"
    if facts.mode & 0o077 or facts.dir_mode & 0o077:
        return "its messaging socket is not private"
    return None


class Route(StrEnum):
    """Which transport the deliverer uses for one recipient now."""

    NATIVE = "native"
    TMUX = "tmux"
    HOLD = "hold"


def choose_route(preference: str, refusal: str | None) -> tuple[Route, str]:
    """The transport for one recipient, and for a hold the reason.

    ``refusal`` is ``native_refusal``'s answer (or why the socket failed just now).
    An unknown preference counts as the default."""
    if preference == Preference.TMUX:
        return Route.TMUX, ""
    if refusal is None:
        return Route.NATIVE, ""
    if preference == Preference.NATIVE:
        return Route.HOLD, f"native delivery only, and {refusal}"
    return Route.TMUX, ""


def wrap(text: str, *, from_socket: str, name: str = ROOM_PEER_NAME, mode: str = PEER_MODE) -> str:
    """The ``<cross-session-message>`` wrapper a client's SendMessage writes: the
    recipient shows it compactly and its hooks can tell who sent it."""
    return (
        f'<cross-session-message from="uds:{_attr(from_socket)}" from-name="{_attr(name)}"'
        f' from-mode="{_attr(mode)}">\n{text}\n</cross-session-message>'
    )


def _attr(value: str) -> str:
    return (
        value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def user_frame(msg_id: str, text: str, *, from_socket: str) -> dict[str, Any]:
    """The message frame: one user turn, wrapped, queued after the recipient's turn."""
    return {
        "msgV": PROTOCOL,
        "msg_id": msg_id,
        "type": "user",
        "message": {"role": "user", "content": wrap(text, from_socket=from_socket)},
        "priority": "next",
        "from": f"uds:{from_socket}",
    }


def idle_frame(msg_id: str, *, from_socket: str) -> dict[str, Any]:
    """Ask the recipient to say when it is idle (answered with a ``peer_idle_notice``).

    Not sent by the deliverer: Claude Code 2.1.330 shows every such request in the
    recipient's transcript ("A process claiming the address uds:... asked to be told
    when this session is next idle ..."); the room reads the client's registry instead
    (``core.heal``)."""
    return {
        "type": "control",
        "action": "notify_when_idle",
        "from": f"uds:{from_socket}",
        "from_mode": PEER_MODE,
        "msgV": PROTOCOL,
        "msg_id": msg_id,
    }


class ReceiptKind(StrEnum):
    """A frame arriving at the room's socket."""

    STATUS = "status"
    IDLE = "idle"


@dataclass(frozen=True, slots=True)
class Receipt:
    """A ``peer_message_status`` or ``peer_idle_notice`` about one frame the room sent."""

    kind: ReceiptKind
    orig_msg_id: str
    status: str = ""
    """For a status: held, delivered, denied, expired, refused, dropped."""
    reason: str = ""
    sender_socket: str = ""


STATUSES = frozenset({"held", "delivered", "denied", "expired", "refused", "dropped"})
REASON_KEEP = 200


def parse_receipt(line: bytes | str) -> Receipt | str:
    """One line from the room's socket: a receipt, or why it is ignored (malformed,
    foreign, a protocol version the room does not know)."""
    try:
        data = json.loads(line)
    except ValueError:
        return "not JSON"
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("type") == "auth":
        return "auth"
    if data.get("type") != "control":
        return f"a {str(data.get('type'))[:20]!r} frame, not a receipt"
    if data.get("msgV") != PROTOCOL:
        return f"protocol version {str(data.get('msgV'))[:10]} unknown to the room"
    orig = data.get("orig_msg_id")
    if not isinstance(orig, str) or not orig:
        return "no orig_msg_id"
    sender = data.get("from")
    sender_socket = sender[4:] if isinstance(sender, str) and sender.startswith("uds:") else ""
    action = data.get("action")
    if action == "peer_idle_notice":
        return Receipt(ReceiptKind.IDLE, orig, sender_socket=sender_socket)
    if action != "peer_message_status":
        return f"control action {str(action)[:30]!r} not handled"
    status = data.get("status")
    if status not in STATUSES:
        return f"status {str(status)[:20]!r} unknown to the room"
    detail = data.get("status_detail")
    if status == "expired" and detail == "refused":
        status = "refused"
    reason = " ".join(
        str(part)
        for part in (data.get("reason"), data.get("drop_reason"))
        if isinstance(part, str) and part
    )
    return Receipt(
        ReceiptKind.STATUS,
        orig,
        status=str(status),
        reason=reason[:REASON_KEEP],
        sender_socket=sender_socket,
    )


class Outcome(StrEnum):
    """What a native status means for the room's messages."""

    HOLD = "hold"
    """Kept queued: the recipient's user decides (the note says where)."""
    DELIVERED = "delivered"
    """Released to the model: the recipient's hook receipts it."""
    FAIL = "fail"
    """Marked failed with the reason (nudged again later, within the bound)."""
    FALLBACK = "fallback"
    """The recipient takes no native messages: the pane is used instead."""


def receipt_outcome(status: str, reason: str = "") -> tuple[Outcome, str]:
    """Map a native status onto the room's delivery statuses, with the reason shown."""
    said = f" ({reason})" if reason else ""
    if status == "held":
        return (
            Outcome.HOLD,
            "held by its client for its user's approval (permission-mode parity): "
            "approve it in its pane" + said,
        )
    if status == "delivered":
        return Outcome.DELIVERED, ""
    if status == "denied":
        return Outcome.FAIL, "denied by its user in the client's dialog"
    if status == "refused":
        return Outcome.FALLBACK, "its client refuses messages from other sessions" + said
    if status == "dropped":
        return Outcome.FAIL, "dropped by its client" + said
    return Outcome.FAIL, "expired in its client before it was taken" + said


OUTSIDE_MARK = "~"
"""Before the name of a session outside the room, wherever the room lists it."""


def room_name_for(session: NativeSession) -> str:
    """A valid room name to bring a session in under (``core.names``' rule)."""
    raw = (session.name or session.cwd.rstrip("/").rsplit("/", 1)[-1] or "agent").lower()
    name = "".join(c if c.isalnum() or c in "_-" else "-" for c in raw if c.isascii())
    name = name.strip("-_")[:32] or "agent"
    return name if name[0].isalnum() else "a" + name[:31]


def bring_in(session: NativeSession) -> str:
    """How the operator brings a session into the room: resumed under the plugin."""
    end = f"claude stop {session.job}" if session.job else "end it (/exit)"
    return (
        f"{end}, then: agent-room start {room_name_for(session)} --cwd {session.cwd}"
        f" -- --resume {session.session_id}"
    )


def outside(
    natives: Sequence[NativeSession], members: Sequence[Mapping[str, Any]], now: float
) -> list[dict[str, Any]]:
    """The sessions the client lists that are not in the room, as ``who`` rows: named
    ``~NAME`` (``~NAME#PID`` where names repeat), with their native status and how to
    bring them in. A member is matched by session id, or by its live process."""
    ids = {m.get("session_id") for m in members if m.get("session_id")}
    pids = {m.get("pid") for m in members if m.get("pid") and m.get("state") != "ended"}
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for s in natives:
        if s.room_peer or s.session_id in ids or s.pid in pids:
            continue
        name = OUTSIDE_MARK + (s.name or room_name_for(s))
        if name in seen:
            name += f"#{s.pid}"
        seen.add(name)
        rows.append(
            {
                "name": name,
                "session_id": s.session_id,
                "agent": "claude",
                "state": room_state(s),
                "native_status": s.status_text,
                "waiting_for": s.waiting_for,
                "kind": s.kind,
                "job": s.job,
                "job_state": s.job_state,
                "pane": s.pane,
                "tmux": s.tmux,
                "pid": s.pid,
                "cwd": s.cwd,
                "version": s.version,
                "native": s.socket is not None and s.peer_protocol == PROTOCOL,
                "age_seconds": round(now - s.started_at, 1) if s.started_at else None,
                "outside": True,
                "bring_in": bring_in(s),
            }
        )
    return rows
