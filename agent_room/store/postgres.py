"""The room on PostgreSQL (psycopg 3): the same store code, a second engine.

The store speaks the standard library's ``sqlite3`` connection interface (``execute``
with ``?`` parameters, rows by name and position, ``BEGIN IMMEDIATE`` ... ``COMMIT``).
``PgConnection`` offers that interface over a psycopg connection, so every store
operation is written once: statements are translated once each (placeholders, the few
SQLite spellings PostgreSQL lacks) and cached; PostgreSQL errors come back as the
``sqlite3`` errors the callers already handle (a constraint, a database that is
unreachable or busy).

Writers are serialised as in SQLite: ``BEGIN IMMEDIATE`` takes a transaction-level
advisory lock of the room, so a read-then-write inside a transaction sees no other
writer between its read and its write. A room is a schema (the first of the
connection's ``search_path``): several rooms can share one database.

The schema is the SQLite migrations, translated statement by statement (types, the
append-only triggers, FTS5 as a full-text index), with its own version counter. A
queued message, a state change or a decided handover notifies the channel
``agent_room`` from a trigger, at commit: the wake-up of every host's deliverer.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import pq
from psycopg.adapt import Loader
from psycopg.types.string import StrDumper

from agent_room.core.errors import RoomUnavailable
from agent_room.store.db import _statements
from agent_room.store.engine import describe
from agent_room.store.schema import MIGRATIONS, SCHEMA_VERSION

CHANNEL = "agent_room"
"""LISTEN/NOTIFY channel of the wake-ups; the payload is the room's schema."""

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
    AS $$ BEGIN PERFORM pg_notify('agent_room', current_schema()); RETURN NULL; END $$
    LANGUAGE plpgsql;
CREATE TABLE IF NOT EXISTS agent_room_schema (version INTEGER NOT NULL);
"""
"""What SQLite has built in and the store uses: scalar ``max``/``min``, ``json_extract``."""

_WAKE = """
CREATE OR REPLACE TRIGGER messages_wake AFTER INSERT OR UPDATE OF status ON messages
    FOR EACH ROW WHEN (NEW.status = 'queued') EXECUTE FUNCTION agent_room_wake();
CREATE OR REPLACE TRIGGER sessions_wake AFTER UPDATE OF state ON sessions
    FOR EACH ROW WHEN (NEW.state IS DISTINCT FROM OLD.state)
    EXECUTE FUNCTION agent_room_wake();
CREATE OR REPLACE TRIGGER events_wake AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION agent_room_wake();
"""
"""Every change the room logs (and what queues a delivery) wakes the listeners, once per
transaction (PostgreSQL folds equal notifications), when it commits."""

# -- statements --------------------------------------------------------------------------

_IDENTITY = re.compile(r"CREATE TABLE (\w+) \(\s*(\w+) INTEGER PRIMARY KEY", re.IGNORECASE)
_ID_COLUMNS = dict(_IDENTITY.findall("\n".join(MIGRATIONS)))
"""Each table's own id column, returned by its INSERTs (``cursor.lastrowid``)."""


def id_column(table: str) -> str | None:
    """The column a table numbers its rows by, if it does (an identity in PostgreSQL)."""
    return _ID_COLUMNS.get(table)


_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+(\w+)\s+)?INTO\s+(\w+)", re.IGNORECASE)
_RESERVED = {"offset": '"offset"'}
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_cache: dict[str, tuple[str, str | None, tuple[int, ...]]] = {}


def translate(sql: str) -> tuple[str, str | None, tuple[int, ...]]:
    """SQLite's statement in PostgreSQL's terms, the id column its INSERT returns, and
    which parameters are a ``LIMIT`` (SQLite's ``LIMIT -1`` is PostgreSQL's ``NULL``)."""
    found = _cache.get(sql)
    if found is None:
        found = _cache[sql] = _translate(sql)
    return found


def _translate(sql: str) -> tuple[str, str | None, tuple[int, ...]]:
    returning = None
    insert = _INSERT.match(sql)
    if insert:
        mode, table = insert.group(1), insert.group(2)
        if mode:
            sql = re.sub(r"INSERT\s+OR\s+\w+\s+INTO", "INSERT INTO", sql, count=1, flags=re.I)
            target = "" if mode.upper() == "IGNORE" else f"({_conflict_key(table)})"
            action = "DO NOTHING" if mode.upper() == "IGNORE" else _replace_all(sql)
            sql = f"{sql.rstrip().rstrip(';')} ON CONFLICT {target} {action}"
        column = _ID_COLUMNS.get(table.lower())
        if column and "RETURNING" not in sql.upper():
            sql = f"{sql.rstrip().rstrip(';')} RETURNING {column}"
            returning = column
    sql = re.sub(r"\bjson_object\(", "json_build_object(", sql)
    # SQLite's way of fixing the join order; PostgreSQL's planner takes a plain join
    sql = re.sub(r"\bCROSS JOIN (\w+(?: \w+)?) ON ", r"JOIN \1 ON ", sql)
    limits: list[int] = []
    return _placeholders(sql, limits), returning, tuple(limits)


def _conflict_key(table: str) -> str:
    """The primary key of ``table`` (for ``INSERT OR REPLACE``)."""
    for script in MIGRATIONS:
        match = re.search(rf"CREATE TABLE {table} \((.*?)\n\s*\);", script, re.S | re.I)
        if not match:
            continue
        body = match.group(1)
        composite = re.search(r"PRIMARY KEY \(([^)]*)\)", body)
        if composite:
            return composite.group(1)
        single = re.search(r"^\s*(\w+) [A-Z ]*PRIMARY KEY", body, re.M)
        if single:
            return single.group(1)
    raise RoomUnavailable(f"no primary key known for {table}")


def _replace_all(sql: str) -> str:
    columns = re.search(r"INTO\s+\w+\s*\(([^)]*)\)", sql, re.I)
    if not columns:
        return "DO NOTHING"
    names = [c.strip() for c in columns.group(1).split(",")]
    return "DO UPDATE SET " + ", ".join(f"{n} = excluded.{n}" for n in names)


def _placeholders(sql: str, limits: list[int]) -> str:
    """``?`` and ``:name`` to psycopg's ``%s`` and ``%(name)s``; ``%`` escaped; literals
    and quoted names left as they are."""
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
            out.append(sql[i : end + 1].replace("%", "%%"))
            i = end + 1
        elif c == "?":
            if last_word.upper() == "LIMIT":
                limits.append(count)
            out.append("%s")
            count += 1
            i += 1
        elif c == "%":
            out.append("%%")
            i += 1
        elif c == ":" and i + 1 < n and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            word = _WORD.match(sql, i + 1)
            assert word is not None
            out.append(f"%({word.group()})s")
            i = word.end()
        elif c.isalpha() or c == "_":
            word = _WORD.match(sql, i)
            assert word is not None
            out.append(_RESERVED.get(word.group(), word.group()))
            last_word = word.group()
            i = word.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


# -- schema ------------------------------------------------------------------------------

_TRIGGER_REFUSE = re.compile(
    r"CREATE TRIGGER (\w+) (BEFORE|AFTER) (\w+) ON (\w+)\s+BEGIN SELECT RAISE\(ABORT,"
    r" '([^']*)'\); END;?",
    re.I | re.S,
)
_FTS = re.compile(
    r"CREATE VIRTUAL TABLE (\w+) USING fts5\(\s*(\w+), content='(\w+)', content_rowid='(\w+)'",
    re.I,
)


def migration_statements(script: str) -> list[str]:
    """One SQLite migration as PostgreSQL statements."""
    fts_tables: list[str] = []
    found: list[str] = []
    for statement in _statements(script):
        text = statement.strip()
        refuse = _TRIGGER_REFUSE.match(text)
        fts = _FTS.match(text)
        if refuse:
            name, when, what, table, message = refuse.groups()
            found.append(
                f"CREATE TRIGGER {name} {when} {what} ON {table} FOR EACH ROW"
                f" EXECUTE FUNCTION agent_room_refuse('{message}')"
            )
        elif fts:
            table, column, content, _rowid = fts.groups()
            fts_tables.append(table)
            found.append(
                f"CREATE INDEX {table} ON {content} USING gin (to_tsvector('simple', {column}))"
            )
        elif text.upper().startswith("CREATE TRIGGER") and any(t in text for t in fts_tables):
            continue  # keeps the FTS5 table in step: PostgreSQL's index does that itself
        else:
            found.append(_types(text))
    return found


def _types(statement: str) -> str:
    statement = re.sub(
        r"\bINTEGER PRIMARY KEY( AUTOINCREMENT)?",
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        statement,
    )
    statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
    statement = re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)
    return re.sub(r"^(\s*)offset ", r'\1"offset" ', statement, flags=re.M)


def _migrate(raw: psycopg.Connection[Any], where: str) -> None:
    version = _version(raw)
    if version == SCHEMA_VERSION:
        return
    if version is not None and version > SCHEMA_VERSION:
        raise RoomUnavailable(
            f"the room at {where} has schema {version}, newer than this agent-room"
            f" understands ({SCHEMA_VERSION}); upgrade agent-room"
        )
    with raw.transaction():
        raw.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':schema'))")
        for statement in _statements(_COMPAT):
            raw.execute(statement)
        row = raw.execute("SELECT version FROM agent_room_schema").fetchone()
        version = row[0] if row else 0
        for index in range(version, SCHEMA_VERSION):
            for statement in migration_statements(MIGRATIONS[index]):
                raw.execute(statement)
        for statement in _statements(_WAKE):
            raw.execute(statement)
        raw.execute("DELETE FROM agent_room_schema")
        raw.execute("INSERT INTO agent_room_schema (version) VALUES (%s)", (SCHEMA_VERSION,))


def _version(raw: psycopg.Connection[Any]) -> int | None:
    if (raw.execute("SELECT to_regclass('agent_room_schema')").fetchone() or [None])[0] is None:
        return None
    row = raw.execute("SELECT version FROM agent_room_schema").fetchone()
    return int(row[0]) if row else None


# -- the connection ----------------------------------------------------------------------


class PgRow(tuple[Any, ...]):
    """A row by position and by column name, like ``sqlite3.Row``."""

    columns: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self.columns[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, as ``dict(row)`` wants them."""
        return list(self.columns)


def _row_factory(cursor: Any) -> Any:
    names = [c.name for c in cursor.description or ()]
    index: dict[str, int] = {}
    for position, name in enumerate(names):
        index.setdefault(name, position)

    def make(values: Any) -> PgRow:
        row = PgRow(values)
        row.columns = index
        return row

    return make


class _Number(Loader):
    """``numeric`` (what ``sum`` and ``avg`` give) as ``int`` or ``float``, as SQLite."""

    def load(self, data: Any) -> Any:
        text = bytes(data).decode()
        return int(text) if text.lstrip("-").isdigit() else float(text)


class PgCursor:
    """The part of ``sqlite3.Cursor`` the store uses."""

    def __init__(self, cursor: psycopg.Cursor[Any], returning: str | None) -> None:
        self.cursor = cursor
        self.lastrowid: int | None = None
        if returning and cursor.description is not None:
            rows = cursor.fetchall()
            self.lastrowid = rows[-1][0] if rows else None
            self._done = True
        else:
            self._done = cursor.description is None

    @property
    def rowcount(self) -> int:
        return self.cursor.rowcount

    @property
    def description(self) -> Any:
        return None if self._done else self.cursor.description

    def fetchone(self) -> Any:
        return None if self._done else self.cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return [] if self._done else self.cursor.fetchall()

    def __iter__(self) -> Any:
        return iter(self.fetchall())


def _mapped(exc: psycopg.Error, where: str) -> sqlite3.Error:
    """The ``sqlite3`` error its callers already handle for a PostgreSQL one."""
    message = exc.diag.message_primary or str(exc).strip()
    if isinstance(exc, psycopg.errors.IntegrityError):
        return sqlite3.IntegrityError(message)
    if isinstance(exc, psycopg.errors.LockNotAvailable | psycopg.errors.QueryCanceled):
        return sqlite3.OperationalError(f"database is locked: {message}")
    if isinstance(exc, psycopg.OperationalError):
        return sqlite3.OperationalError(f"the room's database {where} is unreachable")
    return sqlite3.OperationalError(message)


class PgConnection:
    """The part of ``sqlite3.Connection`` the store uses, over psycopg."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.url = url
        self.where = describe(url)
        self.timeout = timeout
        self._trace: Callable[[str], object] | None = None
        self.raw = self._open()
        _migrate(self.raw, self.where)
        key = self.raw.execute("SELECT hashtext(current_schema() || ':write')").fetchone()
        assert key is not None
        self.lock_key = int(key[0])

    def _open(self) -> psycopg.Connection[Any]:
        try:
            raw: psycopg.Connection[Any] = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, round(self.timeout)),
                application_name="agent-room",
                row_factory=_row_factory,
            )
        except psycopg.Error as exc:
            reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            raise RoomUnavailable(
                f"the room's database {self.where} is unreachable ({reason})"
            ) from None
        raw.adapters.register_loader("numeric", _Number)
        # text, not "unknown": a string passed to a function taking anything (the audit
        # log's json_build_object) must have a type
        raw.adapters.register_dumper(str, StrDumper)
        milliseconds = int(self.timeout * 1000)
        raw.execute(f"SET lock_timeout = {milliseconds}")
        return raw

    @property
    def in_transaction(self) -> bool:
        status = self.raw.info.transaction_status
        return status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR)

    def execute(self, sql: str, params: Any = ()) -> PgCursor:
        """One statement, as ``sqlite3.Connection.execute`` runs it."""
        if self._trace is not None:
            self._trace(sql)
        if self.raw.closed or self.raw.broken:
            self._reconnect()
        if sql == "PRAGMA user_version":  # the schema's version, as SQLite keeps it
            return self._run("SELECT version FROM agent_room_schema", ())
        if sql == "BEGIN IMMEDIATE":
            self._run("BEGIN", ())
            return self._run("SELECT pg_advisory_xact_lock(%s)", (self.lock_key,))
        text, returning, limits = translate(sql)
        if limits and isinstance(params, list | tuple):
            params = [
                None if i in limits and p is not None and p < 0 else p for i, p in enumerate(params)
            ]
        return self._run(text, params, returning)

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Hand each statement (as the store wrote it) to ``callback``, as SQLite does."""
        self._trace = callback

    def executemany(self, sql: str, seq: Any) -> None:
        """One statement for each parameter set."""
        text, _returning, _limits = translate(sql)
        if _returning:
            text = text[: text.rindex(" RETURNING ")]
        try:
            self.raw.cursor().executemany(text, list(seq))
        except psycopg.Error as exc:
            raise _mapped(exc, self.where) from None

    def _run(self, text: str, params: Any, returning: str | None = None) -> PgCursor:
        try:
            return PgCursor(self.raw.execute(text, params), returning)
        except psycopg.Error as exc:
            raise _mapped(exc, self.where) from None

    def _reconnect(self) -> None:
        try:
            fresh = self._open()
        except RoomUnavailable as exc:
            raise sqlite3.OperationalError(str(exc)) from None
        self.raw = fresh

    def close(self) -> None:
        """Let the server go."""
        self.raw.close()


def listen(url: str, stop: Any, heard: Callable[[], None]) -> None:
    """Call ``heard`` on every wake-up of the room at ``url`` until ``stop`` is set.

    A connection of its own, LISTENing on ``CHANNEL``; notifications of other rooms in
    the database (other schemas) are passed over. A lost server is waited for (a second,
    then up to ten) and listened to again; ``heard`` is called once it is back, as
    anything may have changed meanwhile.
    """
    pause = 1.0
    lost = False
    while not stop.is_set():
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
        except psycopg.Error:
            stop.wait(pause)
            pause, lost = min(pause * 2, 10.0), True
            continue
        try:
            schema = (conn.execute("SELECT current_schema()").fetchone() or [""])[0]
            conn.execute(f"LISTEN {CHANNEL}")
            pause = 1.0
            if lost:
                heard()
                lost = False
            while not stop.is_set():
                for note in conn.notifies(timeout=0.5, stop_after=64):
                    if note.payload == schema:
                        heard()
                        break
        except psycopg.Error:
            lost = True
            stop.wait(pause)
        finally:
            conn.close()


def connect(url: str, *, timeout: float = 10.0) -> PgConnection:
    """Open the room at ``url``, migrated to the current schema."""
    try:
        return PgConnection(url, timeout=timeout)
    except sqlite3.Error as exc:
        raise RoomUnavailable(str(exc)) from None
    except psycopg.Error as exc:
        raise RoomUnavailable(str(_mapped(exc, describe(url)))) from None
