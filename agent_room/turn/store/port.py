"""The store's connection: what the store asks of a database, on either engine.

Three connections offer it: SQLite's own (``store.db.RoomConnection``), the turn path's
libpq binding (``store.postgres.PgConnection``) and psycopg's, for the processes that
keep a room open (``agent_room.store.psycopg_conn.PsycopgConnection``). A statement is the
store's own SQL, which both engines run as written, its parameters given in order as
``$1``, ``$2``... (``store.params``); a write transaction begins with ``begin_write``,
each engine's way of taking the room's write lock from the start.

The turn path names these types for the type checker only (``typing`` loads ``re``, a
cost of every hook); the rest of the package imports them as any module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol


class Cursor(Protocol):
    """A statement's result: its rows by position and by column name."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed (-1 where it does not say)."""

    @property
    def description(self) -> Any:
        """The result's columns (their names first), or ``None`` without a result."""

    def fetchone(self) -> Any:
        """The next row, or ``None``."""

    def fetchmany(self, size: int = ..., /) -> list[Any]:
        """The next ``size`` rows."""

    def fetchall(self) -> list[Any]:
        """The rows left."""

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """The room's database, as the store uses it."""

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (a failed one included)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor:
        """Run one statement."""

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]], /) -> object:
        """Run one statement for each parameter set."""

    def begin_write(self) -> None:
        """Begin a transaction holding the room's write lock (one writer at a time)."""

    def commit_write(self, *, wake: bool) -> None:
        """Commit the transaction ``begin_write`` began. ``wake``: it changed what the
        room shows, and the room's watchers are told at the commit (PostgreSQL: a
        notification; SQLite's watchers see the file and its change count instead)."""

    def set_trace_callback(self, callback: Callable[[str], object] | None, /) -> None:
        """Hand each statement to ``callback`` as it runs (``None``: stop)."""

    def close(self) -> None:
        """Let the database go."""
