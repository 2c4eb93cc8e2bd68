"""Opening the room's database: private file, WAL mode, forward migrations.

Every process opens its own connection; SQLite's locking serialises the writers and a
write transaction starts with ``BEGIN IMMEDIATE`` so that it never has to upgrade a read
lock (which is what makes concurrent writers fail with "database is locked").
"""

from __future__ import annotations

# sqlite3's own C module: the package adds datetime adapters the room never uses, and
# with them the import of datetime, on every hook and send (``sqlite3`` is this module)
import _sqlite3 as sqlite3
import os

from agent_room.turn.core.errors import UNREACHABLE_PREFIX, RoomUnavailable
from agent_room.turn.store.home import DB_NAME, MARKER, ensure_private_file, ensure_room_dir
from agent_room.turn.store.schema import MIGRATIONS, SCHEMA_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from agent_room.turn.store.home import StrPath
    from agent_room.turn.store.port import Connection


def _migrate(conn: sqlite3.Connection, path: str) -> None:
    marker = os.path.join(os.path.dirname(path), MARKER)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        ensure_private_file(marker)  # a room made before there were markers gets one
        return
    if version > SCHEMA_VERSION:
        raise RoomUnavailable(
            f"the room at {os.path.dirname(path)} has schema {version}, newer than this "
            f"agent-room understands ({SCHEMA_VERSION}); upgrade agent-room"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:  # asked inside the transaction: the marker follows its commit
            _refuse_if_emptied(path)
        for index in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[index]):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    ensure_private_file(marker)


def _refuse_if_emptied(path: str) -> None:
    """Refuse a database without a schema in a room that had one (see ``MARKER``)."""
    marker = os.path.join(os.path.dirname(path), MARKER)
    if os.path.lexists(marker):
        raise RoomUnavailable(
            f"the room database {path} is empty, but this room had data: restore it"
            f" from a backup, or remove {marker} to start an empty room"
        )


def _statements(script: str) -> Iterator[str]:
    """Split a migration script into statements (``executescript`` would commit early)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip():
        yield buffer


class RoomConnection(sqlite3.Connection):
    """A connection to the room that knows its write-ahead log: a log deleted under a
    running process leaves its connections on the old file, and once another connection
    has gone on with a new log, a write into the old one would leave the room unreadable
    to every process started since, and damage it when saved (see ``write_transaction``
    and ``StoreBase.reopen_if_moved``)."""

    log: tuple[str, int] | None = None
    """The log's path and the inode this connection reads and writes."""
    counted = 0
    """How many times this connection moved the room's change count: a worker woken by
    a change tells its own writes from others' (``StoreBase.others_wrote``)."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        """One statement, its parameters ``$1``, ``$2``... (see ``store.params``) given
        in order: SQLite reads ``$1`` as a parameter named ``1``. Only that form is taken
        (``?`` or ``:name`` would run here and fail on PostgreSQL)."""
        if parameters:
            if isinstance(parameters, dict):
                raise TypeError("the room's statements take their parameters in order")
            parameters = {str(n): value for n, value in enumerate(parameters, 1)}
        return super().execute(sql, parameters)

    def executemany(self, sql: str, seq: Any, /) -> sqlite3.Cursor:
        """One statement for each parameter set (as ``execute`` takes them)."""
        return super().executemany(
            sql, ({str(n): v for n, v in enumerate(params, 1)} for params in seq)
        )

    def begin_write(self) -> None:
        """``BEGIN IMMEDIATE``: the write lock from the start, so that a transaction
        never has to upgrade a read lock (which is what makes writers fail at once)."""
        self.execute("BEGIN IMMEDIATE")

    def commit_write(self, *, wake: bool) -> None:
        """``COMMIT`` (the watchers see the file; the change count tells them apart)."""
        del wake
        self.execute("COMMIT")


def _log_of(path: str) -> tuple[str, int] | None:
    log = path + "-wal"
    try:
        return log, os.stat(log).st_ino
    except OSError:
        return None


def _log_moved(conn: Connection) -> bool:
    """Whether the room's log is no longer the file this connection uses."""
    log: tuple[str, int] | None = getattr(conn, "log", None)
    if log is None:
        return False  # not a RoomConnection (PostgreSQL's, a test's own)
    found = _log_of(log[0][: -len("-wal")])
    return found is None or found[1] != log[1]


def connect(home: StrPath, *, timeout: float = 10.0, create: bool = True) -> RoomConnection:
    """Open (creating if needed, unless not ``create``) the room's database, migrated to
    the current schema."""
    room = ensure_room_dir(home, create=create)
    path = os.path.join(room, DB_NAME)
    ensure_private_file(path)  # create 0600 and refuse symlinks before SQLite opens it
    if os.stat(path).st_size == 0:
        _refuse_if_emptied(path)  # before SQLite writes a header into it
    try:
        # one thread at a time, but not always the one that opened it (console workers)
        conn = sqlite3.connect(
            path,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
            factory=RoomConnection,
        )
    except sqlite3.Error as exc:
        raise RoomUnavailable(f"cannot open the room database {path}: {exc}") from None
    conn.row_factory = sqlite3.Row
    deadline = 0.0
    while True:
        try:
            _prepare(conn, path)
        except sqlite3.DatabaseError as exc:
            # Switching a new room to WAL answers "locked" at once while another process
            # does the same, without waiting for the busy timeout: wait here instead.
            if busy(exc):
                import time

                deadline = deadline or time.monotonic() + timeout
                if time.monotonic() < deadline:
                    time.sleep(0.005)
                    continue
            conn.close()
            raise RoomUnavailable(f"the room database {path} cannot be used: {exc}") from None
        except BaseException:
            conn.close()
            raise
        else:
            conn.log = _log_of(path)  # open now (the schema was read through it)
            return conn


def _prepare(conn: sqlite3.Connection, path: str) -> None:
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if mode != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    _migrate(conn, path)


def busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says another connection holds a lock (it passes by itself)."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    )


_COUNT_CHANGE = (
    "INSERT INTO room_changes (id, n) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET n = n + 1"
)


def count_change(conn: Connection) -> None:
    """Inside a bookkeeping transaction: it changed something shown after all (a new
    holder of a lease, a host back). SQLite: the room's change count moves; PostgreSQL:
    the commit wakes the room's watchers."""
    if hasattr(conn, "total_changes"):
        conn.execute(_COUNT_CHANGE)
        _counted(conn)
        return
    opened = write_transaction._open.get(id(conn))
    if opened is not None:
        opened.wakes = True


def _counted(conn: Connection) -> None:
    """One more move of the room's change count by ``conn`` (a transaction that then
    fails overstates it: its worker then passes once more than it needed)."""
    if isinstance(conn, RoomConnection):
        conn.counted += 1


class write_transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; everything or nothing is written.

    Nothing is written into a write-ahead log deleted under this connection (checked
    holding the write lock, so no other writer is midway): the transaction is refused,
    and the worker reopens the room at its next pass.

    A transaction that changed anything moves the room's change count (``room_changes``),
    unless it is ``bookkeeping``: a lease renewed, a host marked alive again, a worker's
    place moved (what no one shows or acts on). Every file watcher of the room wakes on
    each write, and a watcher that finds the count where it was knows that nothing it
    shows changed (a message read by the memory worker would otherwise wake every worker
    and the console once more).

    One opened while another is open on the same connection is a part of it, a
    ``SAVEPOINT``: what it wrote is undone alone if it fails, and committed with the
    whole (a hook's event is one transaction, whatever the store methods it calls: one
    write, one wake-up of every watcher, and nothing half-written). A class rather than
    ``@contextmanager``: importing contextlib costs the hooks a millisecond on every turn.
    """

    commits = 0
    """Transactions committed by this process: a hook that failed before its first
    commit may try its event again (``hooks._handle_retrying``)."""
    _open: dict[int, write_transaction] = {}  # noqa: RUF012 - the process's own
    """The transaction open on each connection (by ``id``), that a new one joins."""

    def __init__(self, conn: Connection, *, bookkeeping: bool = False) -> None:
        self.conn = conn
        self.bookkeeping = bookkeeping
        self._before: int | None = None
        self._outer: write_transaction | None = None
        self._uncounted = 0
        """Changes of bookkeeping parts and of parts undone, left out of the count at
        the end."""
        self.wakes = not bookkeeping
        """Whether the commit tells the room's watchers (PostgreSQL, see ``commit_write``;
        ``count_change`` sets it in a bookkeeping transaction)."""

    def __enter__(self) -> Connection:
        self._outer = write_transaction._open.get(id(self.conn))
        if self._outer is not None:
            self.conn.execute("SAVEPOINT part")
            self._before = getattr(self.conn, "total_changes", None)
            return self.conn
        try:
            self.conn.begin_write()
        except sqlite3.OperationalError as exc:
            self._rollback()  # PostgreSQL's BEGIN stays open, aborted, when the lock times out
            said = str(exc)  # a PostgreSQL room out of reach says so itself: not busy
            busy = not said.startswith(UNREACHABLE_PREFIX)
            raise RoomUnavailable(f"the room is busy: {said}" if busy else said) from None
        if _log_moved(self.conn):
            self._rollback()
            raise RoomUnavailable(
                "the room's write-ahead log was deleted or replaced under this process:"
                " nothing written until the room is reopened"
            )
        # PostgreSQL's connection has no count: its watchers hear only the changes
        self._before = None if self.bookkeeping else getattr(self.conn, "total_changes", None)
        write_transaction._open[id(self.conn)] = self
        return self.conn

    def __exit__(self, kind: type[BaseException] | None, *_rest: object) -> None:
        if self._outer is not None:
            self._end_part(self._outer, failed=kind is not None)
            return
        del write_transaction._open[id(self.conn)]
        if kind is not None:
            self._rollback()
            return
        try:
            changes = getattr(self.conn, "total_changes", None)  # SQLite's own count
            if self._before is not None and changes != self._before + self._uncounted:
                self.conn.execute(_COUNT_CHANGE)
                _counted(self.conn)
            self.conn.commit_write(wake=self.wakes)
            write_transaction.commits += 1
        except sqlite3.Error:
            # a full disk or a held lock at COMMIT can leave the transaction open: end
            # it, so the connection (a worker's, for hours) can begin the next one
            self._rollback()
            raise

    def _end_part(self, outer: write_transaction, *, failed: bool) -> None:
        """Release the savepoint, or undo what this part wrote and release it. What a
        bookkeeping part or an undone one changed moves no count at the end."""
        if failed:
            try:
                self.conn.execute("ROLLBACK TO part")
                self.conn.execute("RELEASE part")
            except sqlite3.Error:
                return  # the whole transaction went (SQLite ends it on a full disk)
        else:
            self.conn.execute("RELEASE part")
        if self._before is not None and (failed or self.bookkeeping):
            outer._uncounted += getattr(self.conn, "total_changes", 0) - self._before

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            try:  # noqa: SIM105 - no contextlib on the hooks' path (see above)
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # SQLite rolled back by itself (a full disk, an I/O error)
