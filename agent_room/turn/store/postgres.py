"""The room on PostgreSQL: the same store code, a second engine.

The store runs its statements through its connection (``store.port.Connection``:
``execute`` returning a cursor with rows by name and position, ``begin_write`` ...
``COMMIT``). ``PgConnection`` offers it over libpq (``store.libpq``). Every statement of
the store is written once in the SQL both engines run as it is (``$1`` parameters,
``RETURNING``, ``ON CONFLICT``; see ``store.params``): the text goes to the server
unchanged. PostgreSQL errors come back as the ``sqlite3`` errors the callers already
handle (a constraint, a database that is unreachable or busy).

Writers are serialised as in SQLite: ``begin_write`` takes a transaction-level
advisory lock of the room (in the same round trip), so a read-then-write inside a
transaction sees no other writer between its read and its write. A room is a schema
(the first of the connection's ``search_path``): several rooms can share one database.

The schema is written out for PostgreSQL (``store.postgres_schema``), migration by
migration beside SQLite's, with its own version counter. A queued message, a state change
or a decided handover notifies the channel ``agent_room`` from a trigger, at commit: the
wake-up of every host's deliverer.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # its errors; the package would load datetime (see store.db)

from agent_room.turn.core.errors import UNREACHABLE_PREFIX, RoomUnavailable
from agent_room.turn.store.db import _statements
from agent_room.turn.store.engine import describe
from agent_room.turn.store.libpq import Connection, PgError, lock_timeout, opening
from agent_room.turn.store.schema import SCHEMA_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:  # not at run time: ``typing`` loads ``re``, 4 ms of every hook
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, Protocol, Self

    class Migratable(Protocol):
        """A room's connection, either client's (what ``migrate`` needs)."""

        @property
        def in_transaction(self) -> bool: ...

        def run(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
            """Run one statement; its rows (``sqlite3`` errors)."""


CHANNEL = "agent_room"
"""LISTEN/NOTIFY channel of the wake-ups; the payload is the room's schema and a host
(see ``_WAKE``)."""

_COMPAT = """
CREATE OR REPLACE FUNCTION max(anycompatible, anycompatible) RETURNS anycompatible
    AS 'SELECT greatest($1, $2)' LANGUAGE sql IMMUTABLE;
CREATE OR REPLACE FUNCTION min(anycompatible, anycompatible) RETURNS anycompatible
    AS 'SELECT least($1, $2)' LANGUAGE sql IMMUTABLE;
CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text
    AS $$ SELECT (doc::jsonb) #>> string_to_array(nullif(substr(path, 3), ''), '.') $$
    LANGUAGE sql IMMUTABLE;
CREATE OR REPLACE FUNCTION agent_room_refuse() RETURNS trigger
    AS $$ BEGIN RAISE EXCEPTION USING MESSAGE = TG_ARGV[0], ERRCODE = '23000'; END $$
    LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION agent_room_wake() RETURNS trigger
    AS $$ BEGIN PERFORM pg_notify('agent_room', current_schema() || E'\t'); RETURN NULL; END $$
    LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION agent_room_wake_session() RETURNS trigger AS $$ BEGIN
    PERFORM pg_notify('agent_room', current_schema() || coalesce(E'\t' || NEW.host, ''))
    ; RETURN NULL; END $$ LANGUAGE plpgsql;
CREATE OR REPLACE FUNCTION agent_room_wake_recipient() RETURNS trigger AS $$ BEGIN
    PERFORM pg_notify('agent_room', current_schema() || coalesce(E'\t' || (SELECT s.host
    FROM sessions s WHERE s.name = NEW.recipient AND s.left_at IS NULL), ''))
    ; RETURN NULL; END $$ LANGUAGE plpgsql;
CREATE TABLE IF NOT EXISTS agent_room_schema (version INTEGER NOT NULL);
"""
"""What SQLite has built in and the store uses: scalar ``max``/``min``, ``json_extract``."""

_WAKE = """
CREATE OR REPLACE TRIGGER messages_wake AFTER INSERT OR UPDATE OF status ON messages
    FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION agent_room_wake_recipient();
CREATE OR REPLACE TRIGGER messages_receipt_wake AFTER UPDATE OF status ON messages
    FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status AND NEW.status <> 'queued')
    EXECUTE FUNCTION agent_room_wake_recipient();
CREATE OR REPLACE TRIGGER sessions_wake AFTER UPDATE OF state ON sessions
    FOR EACH ROW WHEN (NEW.state IS DISTINCT FROM OLD.state)
    EXECUTE FUNCTION agent_room_wake_session();
CREATE OR REPLACE TRIGGER sessions_join_wake AFTER INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION agent_room_wake_session();
CREATE OR REPLACE TRIGGER events_wake AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION agent_room_wake();
"""
"""Every change the room logs (and what queues a delivery) wakes the listeners, once per
transaction (PostgreSQL folds equal notifications), when it commits. The payload is the
room's schema, a tab, and the host a message's recipient (queued, receipted) or a changed
session runs on (empty for the rest; no tab where there is no such host, as for a room
on one machine): each host's deliverer passes over other hosts' wake-ups."""


def migrate(conn: Migratable, where: str, version: int | None) -> None:
    """Bring the room to this agent-room's schema (made first if ``version`` is
    ``None``), over either client's connection."""
    if version == SCHEMA_VERSION:
        return
    if version is not None and version > SCHEMA_VERSION:
        raise RoomUnavailable(
            f"the room at {where} has schema {version}, newer than this agent-room"
            f" understands ({SCHEMA_VERSION}); upgrade agent-room"
        )
    from agent_room.turn.store.postgres_schema import MAKE_SCHEMA, MIGRATIONS

    conn.run("BEGIN")
    try:
        if version is None:
            conn.run(MAKE_SCHEMA)
        conn.run("SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':schema'))")

        for statement in _statements(_COMPAT):
            conn.run(statement)
        rows = conn.run("SELECT version FROM agent_room_schema")
        version = int(rows[0][0]) if rows else 0
        for index in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[index].split(";\n"):
                if statement.strip():
                    conn.run(statement)
        for statement in _statements(_WAKE):
            conn.run(statement)
        conn.run("DELETE FROM agent_room_schema")
        conn.run("INSERT INTO agent_room_schema (version) VALUES ($1)", [SCHEMA_VERSION])
        conn.run("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.run("ROLLBACK")
        raise


# -- the connection ----------------------------------------------------------------------


class PgRow(tuple):  # type: ignore[type-arg]
    """A row by position and by column name, like ``sqlite3.Row``."""

    columns: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self.columns[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, as ``dict(row)`` wants them."""
        return list(self.columns)


def row_maker(columns: Sequence[str]) -> Callable[[Sequence[Any]], PgRow]:
    """Makes a result's rows, whose columns are ``columns`` (the first of two equal
    names wins, as in ``sqlite3.Row``)."""
    index: dict[str, int] = {}
    for position, name in enumerate(columns):
        index.setdefault(name, position)

    def make(values: Sequence[Any]) -> PgRow:
        row = PgRow(values)
        row.columns = index
        return row

    return make


class PgCursor:
    """A statement's result (``store.port.Cursor``), over rows already fetched."""

    def __init__(self, columns: Sequence[str], rows: list[PgRow], rowcount: int) -> None:
        self.rowcount = rowcount
        self.description: list[tuple[str | None, ...]] | None = None
        if columns:
            self.description = [(name, None, None, None, None, None, None) for name in columns]
        self._rows = rows
        self._next = 0

    @classmethod
    def of(cls, columns: Sequence[str], rows: Sequence[Any], count: int) -> Self:
        """The cursor of a statement's result."""
        if rows and not isinstance(rows[0], PgRow):
            make = row_maker(columns)
            rows = [make(values) for values in rows]
        return cls(columns, list(rows), count)

    def fetchone(self) -> PgRow | None:
        if self.description is None or self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchmany(self, size: int) -> list[PgRow]:
        if self.description is None:
            return []
        found = self._rows[self._next : self._next + size]
        self._next += len(found)
        return found

    def fetchall(self) -> list[PgRow]:
        return self.fetchmany(len(self._rows))

    def __iter__(self) -> Iterator[PgRow]:
        return iter(self.fetchall())


NO_TABLE = "42P01"
"""SQLSTATE of a table that does not exist."""


def mapped_error(sqlstate: str, message: str, where: str, *, broken: bool) -> sqlite3.Error:
    """The ``sqlite3`` error its callers already handle for a PostgreSQL one, whichever
    client met it: its SQLSTATE, its message, and whether the connection is lost."""
    if sqlstate.startswith("23"):
        return sqlite3.IntegrityError(message)
    if sqlstate in ("55P03", "57014", "40P01"):
        return sqlite3.OperationalError(f"database is locked: {message}")
    if broken:
        return sqlite3.OperationalError(f"{UNREACHABLE_PREFIX}{where} is unreachable")
    return sqlite3.OperationalError(message)


def _mapped(exc: PgError, where: str) -> sqlite3.Error:
    """``mapped_error`` for the libpq binding's error."""
    return mapped_error(exc.sqlstate, exc.message, where, broken=exc.broken)


def unopened(where: str, message: str) -> str:
    """One line for a connection that failed: libpq's reason spans lines (the server's
    answer first, then where the password came from), and a server that answered
    (a wrong password, no such role or database) is not unreachable."""
    lines = (" ".join(line.split()) for line in message.splitlines())
    reason = "; ".join(line for line in lines if line) or "no reason"
    answered = "FATAL:" in reason or "fe_sendauth" in reason
    answered = answered and not any(words in reason for words in NOT_YET)
    verb = "refused the connection" if answered else "is unreachable"
    advice = _WHERE_PASSWORDS_GO if "no password supplied" in reason else ""
    return f"{UNREACHABLE_PREFIX}{where} {verb} ({reason}){advice}"


NOT_YET = (
    "the database system is starting up",
    "the database system is not yet accepting connections",
    "the database system is shutting down",
    "the database system is in recovery mode",
)
"""A server's answers while it restarts (SQLSTATE 57P03): it is not there yet, as one
that does not answer; a hook tries again within its budget."""

_WHERE_PASSWORDS_GO = (
    ": give the role's password in ~/.pgpass or the file PGPASSFILE names (mode 0600),"
    " or in room.conf's URL"
)


BEGIN_WRITE = "BEGIN; SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':write'))"
"""``begin_write``: a transaction holding the room's writers' lock, in one round trip."""
WAKE_COMMIT = f"SELECT pg_notify('{CHANNEL}', current_schema() || E'\\t'); COMMIT"
"""``commit_write`` of a transaction that changed what the room shows: its watchers are
told at the commit, in the same round trip (the payload of ``agent_room_wake``: no host
in particular), as every write to a SQLite room wakes its file watchers."""


class PgConnection:
    """The store's connection (``store.port.Connection``) over libpq."""

    JSON_OBJECT = "json_build_object"
    """PostgreSQL's name for SQLite's ``json_object`` (see ``sqlite_base.json_object``)."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.url = url
        self.where = describe(url)
        self.timeout = timeout
        self._trace: Callable[[str], object] | None = None
        self.raw = self._open()
        migrate(self, self.where, self._version(self.raw))

    def _open(self) -> Connection:
        try:
            conn = Connection(*opening(self.url, self.timeout))
        except PgError as exc:
            raise RoomUnavailable(unopened(self.where, exc.message)) from None
        return conn

    def _version(self, conn: Connection) -> int | None:
        """The room's schema version (``None``: no room yet), from the connection's first
        statement, which also set its lock timeout (every process of the room asks:
        one round trip, sent while a hook still imports; a second for a new room)."""
        if isinstance(conn.first, PgError):
            if conn.first.sqlstate != NO_TABLE:
                raise conn.first
            conn.script(lock_timeout(self.timeout))
            return None
        rows = conn.first.rows
        return int(rows[0][0]) if rows else None

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def execute(self, sql: str, params: Any = ()) -> PgCursor:
        """One statement, its parameters in order."""
        self._ready(sql)
        return self._run(sql, list(params))

    def begin_write(self) -> None:
        """``BEGIN`` and the room's writers' lock, in one round trip (``BEGIN_WRITE``)."""
        self._ready(BEGIN_WRITE)
        try:
            self.raw.script(BEGIN_WRITE)
        except PgError as exc:
            raise _mapped(exc, self.where) from None

    def commit_write(self, *, wake: bool) -> None:
        """``COMMIT``, after a notification when ``wake`` (``WAKE_COMMIT``)."""
        sql = WAKE_COMMIT if wake else "COMMIT"
        self._ready(sql)
        try:
            self.raw.script(sql)
        except PgError as exc:
            raise _mapped(exc, self.where) from None

    def _ready(self, sql: str) -> None:
        """Before a statement: hand it to the trace, and open a lost connection again
        (outside a transaction, which a new connection would not have)."""
        if self._trace is not None:
            self._trace(sql)
        if self.raw.broken and not self.raw.in_transaction:
            self._reconnect()

    def executemany(self, sql: str, seq: Any) -> None:
        """One statement for each parameter set."""
        for params in seq:
            self.execute(sql, params)

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Hand each statement (as the store wrote it) to ``callback``, as SQLite does."""
        self._trace = callback

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement: its rows."""
        try:
            return self.raw.execute(sql, params).rows
        except PgError as exc:
            raise _mapped(exc, self.where) from None

    def _run(self, text: str, params: list[Any]) -> PgCursor:
        try:
            result = self.raw.execute(text, params)
        except PgError as exc:
            raise _mapped(exc, self.where) from None
        return PgCursor.of(result.columns, result.rows, result.rowcount)

    def _reconnect(self) -> None:
        try:
            fresh = self._open()
        except RoomUnavailable as exc:
            raise sqlite3.OperationalError(str(exc)) from None
        try:
            self._version(fresh)
        except PgError as exc:
            fresh.close()
            raise _mapped(exc, self.where) from None
        self.raw.close()
        self.raw = fresh

    def close(self) -> None:
        """Let the server go."""
        self.raw.close()


def connect(url: str, *, timeout: float = 10.0) -> PgConnection:
    """Open the room at ``url``, migrated to the current schema."""
    try:
        return PgConnection(url, timeout=timeout)
    except sqlite3.Error as exc:
        raise RoomUnavailable(str(exc)) from None
    except PgError as exc:
        raise RoomUnavailable(str(_mapped(exc, describe(url)))) from None
