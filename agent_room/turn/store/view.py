"""``StoreView``: one feature's statements over a room's ``SqliteStore``.

The hooks load ``SqliteStore`` on every turn and need none of the features' statements,
so each feature (timers and links, loops, the intercom, the socket's sends, the stored
settings) is a view over the same store and its connection, made where it is used.
"""

from __future__ import annotations

from agent_room.turn.store.sqlite import SqliteStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.turn.store.port import Connection


class StoreView:
    """A feature's statements on the connection of a ``SqliteStore``."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    @property
    def conn(self) -> Connection:
        """The store's connection now (a worker reopens it when the room's files move)."""
        return self.store.conn
