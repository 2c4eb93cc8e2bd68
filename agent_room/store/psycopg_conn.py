"""The room on PostgreSQL for the long-lived processes: the store's connection over psycopg.

The console, ``watch`` (the background deliverer is one) and the MCP server keep a room
open for hours: they pay psycopg's import once (100-150 ms, see docs/guide/machines.md)
and get a well-kept client for it, which parses results in C, releases the GIL while it
waits on the server and prepares the statements a worker repeats. The hooks, ``send``
and the other short commands keep the turn path's libpq binding
(``agent_room.turn.store.postgres``); the room's processes choose with the connector
they hand the store (``StoreBase``'s ``open_postgres``).

``PsycopgConnection`` offers what ``PgConnection`` offers the store, and behaves alike:
the same first statement (the lock timeout and the schema's version, one round trip),
the same migration (``postgres.migrate``), ``begin_write`` as ``BEGIN`` and the
room's writers' lock, errors mapped to the same ``sqlite3`` errors by the same rules
(``postgres.mapped_error``), a lost connection opened again before the next statement
outside a transaction, rows by name and position (``PgRow``). Values go both ways as the
binding's do: parameters typed int8, float8, bool, text (anything else as text of an
unknown type), results converted by column type (integers, floats, booleans, numerics
as ``int`` or ``float``, everything else text).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import pq
from psycopg.adapt import AdaptersMap, Buffer, Dumper, Loader
from psycopg.postgres import types as builtin_types
from psycopg.rows import RowMaker
from psycopg.types.bool import BoolDumper, BoolLoader
from psycopg.types.none import NoneDumper
from psycopg.types.numeric import FloatDumper, FloatLoader, Int8Dumper, IntLoader
from psycopg.types.string import StrDumper, TextLoader

from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.store.engine import describe
from agent_room.turn.store.libpq import lock_timeout, lost, opening
from agent_room.turn.store.notices import notice
from agent_room.turn.store.postgres import (
    BEGIN_WRITE,
    NO_TABLE,
    WAKE_COMMIT,
    PgConnection,
    PgCursor,
    PgRow,
    mapped_error,
    migrate,
    row_maker,
    unopened,
)

PREPARE_THRESHOLD: int | None = 5
"""Executions of one statement on a connection after which psycopg prepares it
(psycopg's own default): a worker's repeated statements are parsed and planned once."""
PLAN_CHANGED = "0A000"
"""SQLSTATE of a prepared statement whose result's columns changed under it ("cached plan
must not change result type"): another process migrated the room (a newer agent-room
added a column to a table read with ``SELECT *``)."""


class _AnyDumper(Dumper):
    """Any other value as its text, of a type the server infers (as the binding sends it)."""

    oid = 0

    def dump(self, obj: Any) -> Buffer:
        return str(obj).encode()


class _NumberLoader(Loader):
    """A numeric as ``int`` when whole, else ``float`` (the binding's, not ``Decimal``)."""

    def load(self, data: Buffer) -> int | float:
        raw = bytes(data)
        return int(raw) if raw.lstrip(b"-").isdigit() else float(raw)


def _adapters() -> AdaptersMap:
    """The conversions of the libpq binding (``turn.store.libpq._param`` and ``_value``),
    and no others: a column psycopg would make a ``dict`` (json), a ``datetime`` or
    ``bytes`` comes back as its text, as on the short processes' connections."""
    adapters = AdaptersMap(types=builtin_types)
    for kind, dumper in (
        (object, _AnyDumper),
        (type(None), NoneDumper),
        (str, StrDumper),
        (bool, BoolDumper),
        (int, Int8Dumper),
        (float, FloatDumper),
    ):
        adapters.register_dumper(kind, dumper)
    adapters.register_loader(0, TextLoader)  # every type not named below
    for name, loader in (
        ("int2", IntLoader),
        ("int4", IntLoader),
        ("int8", IntLoader),
        ("oid", IntLoader),
        ("float4", FloatLoader),
        ("float8", FloatLoader),
        ("bool", BoolLoader),
        ("numeric", _NumberLoader),
    ):
        adapters.register_loader(name, loader)
    return adapters


ADAPTERS = _adapters()


def pg_rows(cursor: psycopg.Cursor[Any]) -> RowMaker[PgRow]:
    """psycopg's row factory for rows by name and position (``PgRow``)."""
    columns = [column.name for column in cursor.description or ()]
    return row_maker(columns)


class PsycopgConnection:
    """The store's connection (``store.port.Connection``) over psycopg."""

    JSON_OBJECT = PgConnection.JSON_OBJECT
    """PostgreSQL's name for SQLite's ``json_object`` (see ``sqlite_base.json_object``)."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.url = url
        self.where = describe(url)
        self.timeout = timeout
        self._trace: Callable[[str], object] | None = None
        self._stale = False
        """Its prepared statements met a migration of the room: open it again."""
        self.raw, version = self._open()
        migrate(self, self.where, version)

    def _open(self) -> tuple[psycopg.Connection[PgRow], int | None]:
        """A new connection, its lock timeout set, and the room's schema version
        (``None``: no room yet): the binding's first statement, one round trip."""
        info, first = opening(self.url, self.timeout)
        try:
            conn = psycopg.connect(
                info,
                autocommit=True,
                prepare_threshold=PREPARE_THRESHOLD,
                row_factory=pg_rows,
                cursor_factory=psycopg.RawCursor,
                context=ADAPTERS,
            )
        except psycopg.Error as exc:
            raise RoomUnavailable(unopened(self.where, _connect_failure(exc))) from None
        # to the room's log, as the binding's notices go: never to a terminal
        conn.add_notice_handler(lambda diag: notice(f"{diag.severity}:  {diag.message_primary}"))
        try:
            cursor = conn.execute(first)  # simple protocol: both statements, one trip
            cursor.nextset()
            row = cursor.fetchone()
            return conn, int(row[0]) if row else None
        except psycopg.Error as exc:
            if exc.sqlstate != NO_TABLE:
                error = self._mapped(exc, conn)
                conn.close()
                raise error from None
        try:  # a room not made yet: the failed SELECT took the SET with it
            conn.execute(lock_timeout(self.timeout))
        except psycopg.Error as exc:
            error = self._mapped(exc, conn)
            conn.close()
            raise error from None
        return conn, None

    @property
    def in_transaction(self) -> bool:
        """Inside a transaction (a failed one included), as ``sqlite3`` says."""
        status = self.raw.info.transaction_status
        return status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR)

    def execute(self, sql: str, params: Any = ()) -> PgCursor:
        """One statement, its parameters in order."""
        if self._trace is not None:
            self._trace(sql)
        if (self._stale or self.raw.broken or self.raw.closed) and not self.in_transaction:
            self._reconnect()
        return self._run(sql, params)

    def begin_write(self) -> None:
        """``BEGIN`` and the room's writers' lock, in one round trip (``BEGIN_WRITE``)."""
        self.execute(BEGIN_WRITE)  # no parameters: one round trip for both

    def commit_write(self, *, wake: bool) -> None:
        """``COMMIT``, after a notification when ``wake`` (``WAKE_COMMIT``)."""
        self.execute(WAKE_COMMIT if wake else "COMMIT")  # no parameters: one round trip

    def executemany(self, sql: str, seq: Any) -> None:
        """One statement for each parameter set."""
        for params in seq:
            self.execute(sql, params)

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        """Hand each statement (as the store wrote it) to ``callback``, as SQLite does."""
        self._trace = callback

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[PgRow]:
        """One statement: its rows."""
        return self._run(sql, params).fetchall()

    def _run(self, text: str, params: Sequence[Any], *, again: bool = True) -> PgCursor:
        with self.raw.cursor() as cursor:
            try:
                cursor.execute(text, params or None)  # none: one round trip for a script
            except psycopg.Error as exc:
                if exc.sqlstate == PLAN_CHANGED:
                    # the connection's prepared statements are stale: a new connection
                    # has none (now, or once the transaction that met it has ended)
                    self._stale = True
                    if again and not self.in_transaction:
                        self._reconnect()
                        return self._run(text, params, again=False)
                raise self._mapped(exc, self.raw) from None
            described = cursor.description
            rows = cursor.fetchall() if described else []
            columns = [column.name for column in described or ()]
            return PgCursor.of(columns, rows, cursor.rowcount)

    def _mapped(self, exc: psycopg.Error, conn: psycopg.Connection[Any]) -> sqlite3.Error:
        """The ``sqlite3`` error of a psycopg one, by the binding's rules."""
        sqlstate = exc.sqlstate or ""
        diag = exc.diag.message_primary if exc.sqlstate else None
        message = (diag or str(exc)).strip()
        broken = conn.broken or conn.closed or lost(sqlstate)
        return mapped_error(sqlstate, message, self.where, broken=broken)

    def _reconnect(self) -> None:
        try:
            fresh, _version = self._open()
        except RoomUnavailable as exc:
            raise sqlite3.OperationalError(str(exc)) from None
        self.raw.close()
        self.raw = fresh
        self._stale = False

    def close(self) -> None:
        """Let the server go."""
        self.raw.close()


def _connect_failure(exc: psycopg.Error) -> str:
    """libpq's own words for a connection that failed (what the binding reports), not
    psycopg's summary of its attempts."""
    pgconn = getattr(exc, "pgconn", None)
    said = pgconn.error_message.decode(errors="replace") if pgconn is not None else ""
    return said.strip() or str(exc).removeprefix("connection failed: ")


def connect(url: str, *, timeout: float = 10.0) -> PsycopgConnection:
    """Open the room at ``url`` over psycopg, migrated to the current schema."""
    try:
        return PsycopgConnection(url, timeout=timeout)
    except sqlite3.Error as exc:
        raise RoomUnavailable(str(exc)) from None
