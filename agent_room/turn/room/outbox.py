"""A chat message sent, as every entry point sends one: its checks, and what to tell the
sender.

``agent-room send``, the ``send_message`` tool and the console all come here for a chat
message (``agent_room.turn.room.outbox`` for a handover or a link, which end here too when
they are plain chat), so it is checked, stored and audited the same way whichever door
the sender used. What comes back is the message's id and the lines the sender reads.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.room.service import RoomCore


class Sent:
    """A message stored for its recipient: its id and what the sender is told."""

    __slots__ = ("message_id", "notes")

    def __init__(self, message_id: int, notes: list[str]) -> None:
        self.message_id = message_id
        self.notes = notes
        """Lines for the sender: queued, held, on which link, a cycle warning."""

    def text(self) -> str:
        """The notes and the id, as a tool answers."""
        return "\n".join([*self.notes, f"message id: {self.message_id}"])


def send_chat(room: RoomCore, sender: str, recipient: str, body: str) -> Sent:
    """Queue a chat message; the note says it is queued, or why it is held (the loop
    breaker), or that nothing on this host delivers."""
    from agent_room.turn.store.wake import listening

    message_id, hold = room.send_checked(sender, recipient, body)
    if hold is not None:
        from agent_room.turn.core.loops import sender_notice

        note = sender_notice(message_id, *hold)
    elif recipient.lstrip("@").lower() == "operator":
        note = f"message #{message_id} left for the operator (console, notifications)"
    else:
        hint = "" if listening(room.home) else _no_listener(room, recipient)
        note = f"message #{message_id} queued for {recipient}{hint}"
        name = recipient.lstrip("@").lower()
        held_by = room.store.over_budget(name, room.clock())
        if held_by is not None:  # the note to the sender: it waits, do not wait for it
            from agent_room.turn.core.budgets import over_text

            return Sent(message_id, [note, f"{over_text(name, held_by)}; go on with your own work"])
    return Sent(message_id, [note])


def _no_listener(room: RoomCore, recipient: str) -> str:
    """Why nothing on this host delivers (asked only then): in a room across machines the
    recipient's own host delivers, and this host's FIFO says nothing of it."""
    from agent_room.turn.core.names import parse_name

    row = room.store.holder(parse_name(recipient, allow_reserved=True))
    host = row.get("host") if row else None
    if host is None or host == room.store.host:
        if _deliverer_alive(room):
            return ""  # it runs, but cannot be poked (its FIFO was replaced): it says so
        return " (no deliverer is running: see `agent-room watch`)"
    if host in room.silent_hosts(room.clock()):
        from agent_room.turn.core.printable import printable

        return f" (host {printable(host)} is silent: delivered once its watch is back)"
    return ""


def _deliverer_alive(room: RoomCore) -> bool:
    """Whether the holder of this host's deliverer lease is alive (asked only when its
    FIFO did not answer)."""
    from agent_room.turn.procfs import is_alive
    from agent_room.turn.store.delivery import deliverer_lease

    lease = room.store.lease(deliverer_lease(room.store))
    return bool(lease and lease["pid"] and is_alive(int(lease["pid"]), lease["pid_start"]))
