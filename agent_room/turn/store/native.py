"""Claude Code's messaging socket in SQLite: the frames sent, their statuses, and the
messages agents sent one another with their own SendMessage tool.

Not mixed into ``SqliteStore``: the deliverer uses the sends, and the UserPromptSubmit
hook records native traffic only when a prompt carries a cross-session wrapper.
A frame is recorded before it is sent, so a stand-by deliverer knows what is in flight
and a status arriving for it finds it.
"""

from __future__ import annotations

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite_base import event
from agent_room.turn.store.view import StoreView

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.store.sqlite import SqliteStore
    from agent_room.turn.store.sqlite_base import Row

NATIVE_KIND = "native"
"""The kind of a message one agent sent another with Claude Code's own SendMessage."""


class NativeStore(StoreView):
    """The socket's sends and statuses, over one room's store."""

    def record_send(
        self,
        native_id: str,
        *,
        nudge_id: int,
        recipient: str,
        session_id: str | None,
        socket: str,
        at: float,
    ) -> None:
        """A frame about to go through ``socket`` for the nudge ``nudge_id``."""
        with write_transaction(self.conn) as conn:
            conn.execute(
                "INSERT INTO native_sends (native_id, nudge_id, recipient, session_id, socket,"
                " sent_at) VALUES ($1,$2,$3,$4,$5,$6)",
                (native_id, nudge_id, recipient, session_id, socket, at),
            )
            event(
                conn,
                at,
                "delivery.native",
                "room",
                recipient,
                data={"nudge": nudge_id, "native_id": native_id},
            )

    def set_status(
        self, native_id: str, status: str, reason: str, *, sender_socket: str, at: float
    ) -> Row | None:
        """Record the status a client sent back for one of the room's frames; None when
        the frame is not the room's, or the status comes from another socket than the
        one it was sent to (a foreign receipt)."""
        row = self.conn.execute(
            "SELECT * FROM native_sends WHERE native_id = $1", (native_id,)
        ).fetchone()
        if row is None or (sender_socket and sender_socket != row["socket"]):
            return None
        if status == "held" and row["status"] not in (None, "held"):
            return dict(row)  # read after the final status (each comes on its own connection)
        with write_transaction(self.conn) as conn:
            conn.execute(
                "UPDATE native_sends SET status = $1, reason = $2, status_at = $3 WHERE"
                " native_id = $4",
                (status, reason, at, native_id),
            )
            event(
                conn,
                at,
                f"native.{status}",
                "room",
                row["recipient"],
                data={"nudge": row["nudge_id"], "reason": reason} if reason else None,
            )
        found = dict(row)
        found.update(status=status, reason=reason, status_at=at)
        return found

    def latest_for_nudge(self, nudge_id: int) -> Row | None:
        """The newest frame sent for a nudge, with its status."""
        row = self.conn.execute(
            "SELECT * FROM native_sends WHERE nudge_id = $1 ORDER BY sent_at DESC LIMIT 1",
            (nudge_id,),
        ).fetchone()
        return dict(row) if row else None

    def was_native(self, nudge_id: int) -> bool:
        """Whether a nudge went through a socket (then it is not typed into the pane)."""
        return self.latest_for_nudge(nudge_id) is not None


def record_traffic(
    store: SqliteStore,
    *,
    sender: str,
    recipient: str,
    body: str,
    at: float,
    data: dict[str, object],
) -> int:
    """A message one session sent another with its client's own SendMessage, as the
    recipient's UserPromptSubmit hook saw it arrive: in the history and the flow,
    delivered and read (the model has it)."""
    with write_transaction(store.conn) as conn:
        message_id = conn.execute(
            "INSERT INTO messages (kind, sender, recipient, body, created_at, status,"
            " delivered_at, read_at, via) VALUES ($1,$2,$3,$4,$5, 'delivered', $6, $7, 'native')"
            " RETURNING id",
            (NATIVE_KIND, sender, recipient, body, at, at, at),
        ).fetchone()[0]
        event(
            conn,
            at,
            "message.sent",
            sender,
            recipient,
            message_id,
            {"kind": NATIVE_KIND, "to": recipient, "status": "delivered", **data},
        )
        event(conn, at, "message.delivered", recipient, recipient, message_id, {"via": "native"})
    return int(message_id)
