"""The room on PostgreSQL: the same store code, a second engine.

The store speaks the standard library's ``sqlite3`` connection interface (``execute``
with ``?`` parameters, rows by name and position, ``BEGIN IMMEDIATE`` ... ``COMMIT``).
``PgConnection`` offers that interface over libpq (``store.libpq``), so every store
operation is written once: statements are translated once each (placeholders, the few
SQLite spellings PostgreSQL lacks) and cached; PostgreSQL errors come back as the
``sqlite3`` errors the callers already handle (a constraint, a database that is
unreachable or busy).

Writers are serialised as in SQLite: ``BEGIN IMMEDIATE`` takes a transaction-level
advisory lock of the room (in the same round trip), so a read-then-write inside a
transaction sees no other writer between its read and its write. A room is a schema
(the first of the connection's ``search_path``): several rooms can share one database.

The schema is the SQLite migrations, translated statement by statement (types, the
append-only triggers, FTS5 as a full-text index), with its own version counter. A
queued message, a state change or a decided handover notifies the channel
``agent_room`` from a trigger, at commit: the wake-up of every host's deliverer.
"""

from __future__ import annotations

import _sqlite3 as sqlite3  # its errors; the package would load datetime (see store.db)
import itertools

from agent_room.turn.core.errors import UNREACHABLE_PREFIX, RoomUnavailable
from agent_room.turn.store.db import _statements
from agent_room.turn.store.engine import describe
from agent_room.turn.store.libpq import Connection, PgError, lock_timeout, opening
from agent_room.turn.store.schema import MIGRATIONS, SCHEMA_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:  # not at run time: ``typing`` loads ``re``, 4 ms of every hook
    from collections.abc import Callable, Iterator, Sequence
    from typing import Any, Protocol, Self

    class Untranslated(Protocol):
        """A room's connection, either client's, running statements written for
        PostgreSQL as they are (what ``migrate`` needs)."""

        @property
        def in_transaction(self) -> bool: ...

        def run(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
            """Run one statement untranslated; its rows (``sqlite3`` errors)."""


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

# -- statements --------------------------------------------------------------------------


def _identity_columns() -> dict[str, str]:
    """Each table's own id column (``INTEGER PRIMARY KEY`` on the line after its name)."""
    found: dict[str, str] = {}
    for script in MIGRATIONS:
        lines = script.splitlines()
        for line, after in itertools.pairwise(lines):
            words, column = line.split(), after.split()
            table = words[:2] == ["CREATE", "TABLE"] and words[-1] == "("
            if table and " ".join(column[1:4]).rstrip(",") == "INTEGER PRIMARY KEY":
                found[words[2].lower()] = column[0]
    return found


_ID_COLUMNS = _identity_columns()
"""Each table's own id column, returned by its INSERTs (``cursor.lastrowid``)."""


def id_column(table: str) -> str | None:
    """The column a table numbers its rows by, if it does (an identity in PostgreSQL)."""
    return _ID_COLUMNS.get(table)


_RESERVED = {"offset": '"offset"'}
_cache: dict[str, Statement] = {}


class Statement:
    """One SQLite statement as PostgreSQL runs it."""

    __slots__ = ("limits", "names", "returning", "text")

    def __init__(
        self, text: str, returning: str | None, limits: tuple[int, ...], names: tuple[str, ...]
    ) -> None:
        self.text = text
        self.returning = returning
        """The id column an INSERT returns (``cursor.lastrowid``)."""
        self.limits = limits
        """Which parameters are a ``LIMIT`` (SQLite's ``LIMIT -1`` is ``NULL`` here)."""
        self.names = names
        """The order of ``:name`` parameters (empty: ``?`` parameters)."""

    def params(self, given: Any) -> list[Any]:
        """The statement's parameters, in ``$1``... order."""
        values = [given[n] for n in self.names] if self.names else list(given)
        for index in self.limits:
            if isinstance(values[index], int) and values[index] < 0:
                values[index] = None
        return values


def translate(sql: str) -> Statement:
    """SQLite's statement in PostgreSQL's terms (cached)."""
    found = _cache.get(sql)
    if found is None:
        found = _cache[sql] = _translate(sql)
    return found


def _translate(sql: str) -> Statement:
    returning = None
    words = sql.split(None, 5)
    if words and words[0].upper() == "INSERT":
        mode = words[2] if words[1].upper() == "OR" else None
        table = (words[4] if mode else words[2]).split("(")[0].lower()
        if mode:
            from agent_room.turn.store.postgres_schema import insert_or

            sql = insert_or(sql, mode, table)
        column = _ID_COLUMNS.get(table)
        if column and "RETURNING" not in sql.upper():
            sql = f"{sql.rstrip().rstrip(';')} RETURNING {column}"
            returning = column
    sql = sql.replace("json_object(", "json_build_object(")
    if "CROSS JOIN" in sql:
        from agent_room.turn.store.postgres_schema import plain_joins

        sql = plain_joins(sql)
    limits: list[int] = []
    names: list[str] = []
    text = _placeholders(sql, limits, names)
    return Statement(text, returning, tuple(limits), tuple(names))


def _word_end(sql: str, start: int) -> int:
    end = start
    while end < len(sql) and (sql[end].isalnum() or sql[end] == "_"):
        end += 1
    return end


def _placeholders(sql: str, limits: list[int], names: list[str]) -> str:
    """``?`` and ``:name`` to ``$1``...; literals and quoted names left as they are."""
    out: list[str] = []
    i, n = 0, len(sql)
    count, last_word = 0, ""
    while i < n:
        c = sql[i]
        if c in "'\"":
            end = i + 1
            while end < n:
                if sql[end] == c:
                    if end + 1 < n and sql[end + 1] == c:
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i : end + 1])
            i = end + 1
        elif c == "?":
            if last_word.upper() == "LIMIT":
                limits.append(count)
            count += 1
            out.append(f"${count}")
            i += 1
        elif c == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            end = _word_end(sql, i + 1)
            name = sql[i + 1 : end]
            if name not in names:
                names.append(name)
            out.append(f"${names.index(name) + 1}")
            i = end
        elif c.isalpha() or c == "_":
            end = _word_end(sql, i)
            last_word = sql[i:end]
            out.append(_RESERVED.get(last_word, last_word))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def migrate(conn: Untranslated, where: str, version: int | None) -> None:
    """Bring the room to this agent-room's schema (made first if ``version`` is
    ``None``), over either client's connection."""
    if version == SCHEMA_VERSION:
        return
    if version is not None and version > SCHEMA_VERSION:
        raise RoomUnavailable(
            f"the room at {where} has schema {version}, newer than this agent-room"
            f" understands ({SCHEMA_VERSION}); upgrade agent-room"
        )
    from agent_room.turn.store.postgres_schema import MAKE_SCHEMA, migration_statements

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
            for statement in migration_statements(MIGRATIONS[index]):
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
    """The part of ``sqlite3.Cursor`` the store uses, over rows already fetched."""

    def __init__(
        self,
        columns: Sequence[str],
        rows: list[PgRow],
        rowcount: int,
        lastrowid: int | None = None,
    ) -> None:
        self.rowcount = rowcount
        self.lastrowid = lastrowid
        self.description: list[tuple[str | None, ...]] | None = None
        if columns and lastrowid is None:
            self.description = [(name, None, None, None, None, None, None) for name in columns]
        self._rows = rows
        self._next = 0

    @classmethod
    def of(cls, columns: Sequence[str], rows: Sequence[Any], count: int, returning: bool) -> Self:
        """The cursor of a statement's result; an INSERT that ``returning`` its row's id
        (``cursor.lastrowid``) shows no rows."""
        if returning:
            return cls([], [], count, rows[-1][0] if rows else None)
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
"""``BEGIN IMMEDIATE``: a transaction holding the room's writers' lock, in one round trip."""


class PgConnection:
    """The part of ``sqlite3.Connection`` the store uses, over libpq."""

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
        """One statement, as ``sqlite3.Connection.execute`` runs it."""
        if self._trace is not None:
            self._trace(sql)
        if self.raw.broken and not self.raw.in_transaction:
            self._reconnect()
        if sql == "PRAGMA user_version":  # the schema's version, as SQLite keeps it
            return self._run("SELECT version FROM agent_room_schema", [])
        if sql == "BEGIN IMMEDIATE":
            try:
                self.raw.script(BEGIN_WRITE)
            except PgError as exc:
                raise _mapped(exc, self.where) from None
            return PgCursor([], [], -1)
        statement = translate(sql)
        return self._run(statement.text, statement.params(params), statement.returning)

    def executemany(self, sql: str, seq: Any) -> None:
        """One statement for each parameter set."""
        for params in seq:
            self.execute(sql, params)

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Hand each statement (as the store wrote it) to ``callback``, as SQLite does."""
        self._trace = callback

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement written for PostgreSQL, untranslated: its rows."""
        try:
            return self.raw.execute(sql, params).rows
        except PgError as exc:
            raise _mapped(exc, self.where) from None

    def _run(self, text: str, params: list[Any], returning: str | None = None) -> PgCursor:
        try:
            result = self.raw.execute(text, params)
        except PgError as exc:
            raise _mapped(exc, self.where) from None
        return PgCursor.of(result.columns, result.rows, result.rowcount, bool(returning))

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
