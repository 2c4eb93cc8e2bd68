"""What every part of the SQLite store shares: the connection, rows, audit events."""

from __future__ import annotations

import _sqlite3 as sqlite3  # as in store.db: sqlite3 without its datetime adapters
import os

from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.store.db import connect
from agent_room.turn.store.engine import database_url, host_id, notices_to_log
from agent_room.turn.store.home import DB_NAME, ensure_room_dir
from agent_room.turn.store.params import Params

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from agent_room.turn.store.home import StrPath
    from agent_room.turn.store.port import Connection, Cursor

    Row = dict[str, Any]
    """A row as the store returns it: column name to value."""

    class PostgresConnector(Protocol):
        """Opens the room at a PostgreSQL URL behind the ``sqlite3`` interface the store
        speaks (``store.postgres``), migrated to the current schema; raises
        ``RoomUnavailable`` when it cannot."""

        def __call__(self, url: str, *, timeout: float) -> Any: ...


def rows(cursor: Cursor) -> list[Row]:
    """Every row of a cursor as a plain dict."""
    return [dict(row) for row in cursor.fetchall()]


def event(
    conn: Connection,
    at: float,
    kind: str,
    actor: str,
    subject: str | None = None,
    message_id: int | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    """Append one audit event inside the caller's transaction."""
    p = Params()
    values = p.each((at, kind, actor, subject, message_id))
    data_sql = json_object(data or {}, p, getattr(conn, "JSON_OBJECT", "json_object"))
    conn.execute(
        f"INSERT INTO events (at, kind, actor, subject, message_id, data) VALUES ({values},"
        f" {data_sql})",
        p,
    )


def json_object(data: dict[str, Any], p: Params, function: str = "json_object") -> str:
    """SQL building ``data`` as a JSON object, its values added to ``p``.

    The database writes the JSON (SQLite's ``json_object``; PostgreSQL's
    ``json_build_object``, which its connection names as ``JSON_OBJECT``): the processes
    that write the most, hooks and ``agent-room send``, need not load the ``json`` module
    for a few flat fields. Nested values are encoded by ``json`` and embedded with
    ``json()``; floats must be finite (as in JSON itself).
    """
    parts: list[str] = []
    for key, value in data.items():
        if isinstance(value, bool):
            parts.append(f"{p(key)}, json({p('true' if value else 'false')})")
        elif isinstance(value, float):  # SQLite would round it to 15 digits
            parts.append(f"{p(key)}, json({p(repr(value))})")
        elif value is None:  # typed (a PostgreSQL parameter alone would not be)
            parts.append(f"{p(key)}, json({p('null')})")
        elif isinstance(value, str | int):
            parts.append(f"{p(key)}, {p(value)}")
        else:
            import json

            parts.append(f"{p(key)}, json({p(json.dumps(value))})")
    return f"{function}({', '.join(parts)})"


class StoreBase:
    """Owns the connection to ``<home>/room.db``, or to the room's PostgreSQL database.

    A room on PostgreSQL is reached through ``open_postgres``: the turn path's libpq
    binding unless the caller gives another. The long-lived processes (the console,
    ``watch``, the MCP server) give psycopg's (``agent_room.room.service.connect_long_lived``);
    a hook, ``send`` or another short command gives none, and never loads psycopg.
    """

    def __init__(
        self,
        home: StrPath,
        *,
        timeout: float = 10.0,
        open_postgres: PostgresConnector | None = None,
        create: bool = True,
    ) -> None:
        """``create``: make the room if it is not there (a command that starts it); a
        process that works in a room opened before passes False, and meets ``RoomGone``
        once the room is removed, rather than making an empty one in its place."""
        self.home = os.fspath(home)
        self.timeout = timeout
        if not create:
            ensure_room_dir(self.home, create=False)  # before room.conf is looked for
        self.host = host_id()
        """The machine this process runs on: its sessions, panes and processes are ours."""
        self.url = database_url(self.home)
        """The PostgreSQL room this store uses, or ``None`` for ``<home>/room.db``."""
        self.conn: Connection
        """The room's database (SQLite's file, or PostgreSQL's through ``open_postgres``)."""
        if self.url is None:
            self.conn = connect(home, timeout=timeout, create=create)
        else:
            self.conn = _connect_postgres(self.home, self.url, timeout, open_postgres)
        self._files = _files(self.home)

    @property
    def engine(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return "sqlite" if self.url is None else "postgresql"

    def schema_version(self) -> int:
        """How many of the schema's migrations the room has (``store.schema``)."""
        if self.url is None:
            return int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        return int(self.conn.execute("SELECT version FROM agent_room_schema").fetchone()[0])

    def changes(self) -> int | None:
        """The room's change count (see ``write_transaction``): where it stands still,
        nothing but leases and hosts' renewals was written. ``None`` on PostgreSQL,
        where a watcher is woken only by changes."""
        if self.url is not None:
            return None
        row = self.conn.execute("SELECT n FROM room_changes WHERE id = 1").fetchone()
        return int(row[0]) if row else 0

    def mark(self) -> tuple[int, int] | None:
        """Where the room's change count stands now, and how much of it this store's
        connection moved (``others_wrote``); None on PostgreSQL."""
        count = self.changes()
        return None if count is None else (count, getattr(self.conn, "counted", 0))

    def others_wrote(self, mark: tuple[int, int] | None) -> bool:
        """Whether anything but this store's own writes changed the room since ``mark``
        (always, when it cannot tell: PostgreSQL, a connection reopened since)."""
        now = self.mark()
        if mark is None or now is None:
            return True
        return now[0] - mark[0] != now[1] - mark[1]

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self.conn.close()

    def recover(self) -> None:
        """After a failed statement: end a transaction SQLite may have left open."""
        if self.conn.in_transaction:
            try:  # noqa: SIM105 - no contextlib on the hooks' path
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def reopen_if_moved(self) -> bool:
        """Reopen the room when its files are no longer those this connection uses.

        A write-ahead log deleted under running processes leaves them on a file nobody
        else sees, and every process started since then fails ("disk I/O error") until
        one of them saves that log into the database and the room goes on with a new
        one. While this connection is open no other connection deletes the log, so a
        different or missing log was removed from outside. What the old log holds is
        saved before the connection is let go, if the room's index still describes it:
        once another connection has gone on with a new log, the old file's frames sit
        where the index means the new log's, and copying them would write stale pages
        over new ones (then it was saved already, or by nobody: see ``_index_holds``).
        Nothing is read or written through a connection left on a moved log: a save a
        reader keeps from finishing is tried again at the next pass.
        """
        if self.url is not None:
            return False  # the room's files are a server's own business
        now = _files(self.home)
        if now == self._files or (self._files[1] is None and now[0] == self._files[0]):
            self._files = now
            return False
        ensure_room_dir(self.home, create=False)  # never made anew from here
        old = self.conn
        replaced = now[0] != self._files[0]  # the old file's log is no longer the room's
        log = getattr(old, "log", None)
        if replaced or log is None or _index_holds(self.home, log[1]):
            try:
                busy = old.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.Error:
                busy = 0
            if busy and not replaced:
                raise RoomUnavailable(
                    "the room's write-ahead log was deleted: saving what it holds waits"
                    " for a reader (tried again)"
                )
        self.conn = connect(self.home, timeout=self.timeout, create=False)
        self._files = _files(self.home)
        try:  # noqa: SIM105
            old.close()
        except sqlite3.Error:
            pass
        return True


def _connect_postgres(
    home: str, url: str, timeout: float, connector: PostgresConnector | None
) -> Connection:
    """The room on PostgreSQL, behind the ``sqlite3`` interface the store speaks (see
    ``store.postgres``), through ``connector`` (else the libpq binding); the room
    directory stays, private, for this host's own files."""
    if connector is None:
        from agent_room.turn.store.postgres import connect

        connector = connect

    ensure_room_dir(home)
    notices_to_log(home)
    conn: Any = connector(url, timeout=timeout)
    return conn  # type: ignore[no-any-return]


def _index_holds(home: str, log: int) -> bool:
    """Whether the room's shared index (``room.db-shm``) still describes the log this
    process holds open as inode ``log``: the salt in the log's header is the one in the
    index's (both raw bytes). Emptied (saved by another connection) or started anew by
    one, it is not. Both are read through SQLite's own descriptors, found in ``/proc``:
    closing a descriptor of its own on the index would drop every lock this process holds
    on it, and another process would start the index afresh under the mapped file. Where
    they cannot be found, assume it does, as before."""
    try:
        fds = os.listdir("/proc/self/fd")
        index = os.stat(os.path.join(home, DB_NAME + "-shm"))
    except OSError:
        return True
    held: dict[int, int] = {}
    for fd in fds:
        try:
            found = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if found.st_dev == index.st_dev and found.st_ino in (log, index.st_ino):
            held[found.st_ino] = int(fd)
    if log not in held or index.st_ino not in held:
        return True
    try:
        header = os.pread(held[log], 32, 0)
        shared = os.pread(held[index.st_ino], 48, 0)
    except OSError:
        return True
    return len(header) == 32 and len(shared) == 48 and header[16:24] == shared[32:40]


def _files(home: str) -> tuple[int | None, int | None]:
    """The identities (inode numbers) of the room's database and its write-ahead log."""
    path = os.path.join(home, DB_NAME)
    found: list[int | None] = []
    for name in (path, path + "-wal"):
        try:
            found.append(os.stat(name).st_ino)
        except OSError:
            found.append(None)
    return found[0], found[1]
