"""Messages agents send one another with Claude Code's own SendMessage tool, recorded.

The room does not carry them: the recipient's UserPromptSubmit hook sees each arrive
(``core.peer_prompt``) and writes it into the history and the message flow, so the
console shows all traffic between agents, not only the room's own. The sender is named
as the room knows it where its socket leads to a live member's process (the client
verified that socket belongs to the sender); otherwise by the name it claims, marked
with ``~`` as not verified. Light on imports: it runs inside the hook.
"""

from __future__ import annotations

from agent_room.turn.store.native import record_traffic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from agent_room.turn.core.peer_prompt import PeerPrompt
    from agent_room.turn.room.service import RoomCore

UNVERIFIED = "~"
"""Before a sender's claimed name: a session the room does not know."""
CLAIM_KEEP = 32


def sender_of(room: RoomCore, peer: PeerPrompt) -> tuple[str, bool]:
    """The sender's room name (verified) or its claimed name marked unverified."""
    pid = peer.socket_pid
    if pid is not None:
        row = room.store.conn.execute(
            "SELECT name FROM sessions WHERE pid = $1 AND left_at IS NULL AND state != 'ended'"
            " ORDER BY updated_at DESC",
            (pid,),
        ).fetchone()
        if row is not None:
            return str(row[0]), True
    claimed = "".join(c for c in (peer.name or "peer") if c.isalnum() or c in "-_.")
    return UNVERIFIED + (claimed[:CLAIM_KEEP] or "peer"), False


def record_peer_message(room: RoomCore, session: Mapping[str, Any], peer: PeerPrompt) -> int:
    """Write one arriving native message into the history; its id."""
    sender, verified = sender_of(room, peer)
    data: dict[str, object] = {"verified": verified, "via": "native"}
    if peer.name:
        data["claimed_name"] = peer.name[:CLAIM_KEEP]
    if peer.mode:
        data["mode"] = peer.mode[:CLAIM_KEEP]
    return record_traffic(
        room.store,
        sender=sender,
        recipient=str(session["name"]),
        body=peer.body,
        at=room.clock(),
        data=data,
    )
