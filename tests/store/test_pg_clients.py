"""The two clients of a room on PostgreSQL behave alike, against the run's real server.

The hooks and ``send`` reach the room through the libpq binding
(``turn.store.postgres``), the console, ``watch`` and the MCP server through psycopg
(``store.psycopg_conn``): the store code above them is the same, so values, rows,
errors, the writers' lock and the lock timeout must be the same on both. In every pass:
each test makes its own room in the run's cluster.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_room.store import psycopg_conn
from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.store import postgres
from tests.pgcluster import Cluster

Connect = Callable[..., Any]
CLIENTS: dict[str, Connect] = {"libpq": postgres.connect, "psycopg": psycopg_conn.connect}


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A room not made yet (an empty schema) in the run's cluster."""
    return pg_cluster.new_room(f"room_{os.urandom(6).hex()}")


@pytest.fixture(params=list(CLIENTS))
def connect(request: pytest.FixtureRequest) -> Connect:
    """Each client's ``connect`` in turn."""
    return CLIENTS[request.param]


@pytest.fixture
def apart(pg_cluster: Cluster) -> Iterator[dict[str, Any]]:
    """Each client on a room of its own, made by it."""
    opened = {
        name: connect(pg_cluster.new_room(f"room_{os.urandom(6).hex()}"), timeout=0.5)
        for name, connect in CLIENTS.items()
    }
    yield opened
    for conn in opened.values():
        conn.close()


@pytest.fixture
def both(pg_url: str) -> Iterator[dict[str, Any]]:
    """The same room open through each client."""
    opened = {name: connect(pg_url, timeout=0.5) for name, connect in CLIENTS.items()}
    yield opened
    for conn in opened.values():
        conn.close()


def _outcome(conn: Any, sql: str, params: Any = ()) -> Any:
    """What a statement gave: its rows (as tuples and by name) and row count, or the
    ``sqlite3`` error it raised (type and message); the transaction it left, ended."""
    try:
        cursor = conn.execute(sql, params)
        rows = cursor.fetchall()
        named = [dict(zip(row.keys(), row, strict=True)) for row in rows]
        return [tuple(row) for row in rows], named, cursor.rowcount
    except sqlite3.Error as exc:
        return type(exc), str(exc)
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


STATEMENTS = [
    (
        "SELECT $1 AS a, $2 AS b, $3 AS c, $4 AS d, $5 AS e, CAST(2.5 AS numeric) AS f,"
        " CAST(7 AS numeric) AS g, NULL AS h, json_build_object('k', $6) AS j",
        (-(2**40), 0.1, True, "é ✓ \\ '", None, 3),
    ),
    ("SELECT sum(x) AS total, avg(x) AS mean FROM (VALUES (1), (2)) v(x)", ()),
    ("SELECT name, state FROM sessions WHERE name = $1", ("nobody",)),
    ("INSERT INTO events (at, kind, actor) VALUES ($1, $2, $3) RETURNING id", (1.5, "t", "a")),
    ("UPDATE events SET kind = kind WHERE id < 0", ()),
    ("SELECT * FROM events ORDER BY id LIMIT $1", (5,)),
    ("SELECT version FROM agent_room_schema", ()),
    ("INSERT INTO sessions (session_id) VALUES (NULL)", ()),  # a constraint
    ("SELECT nothing FROM sessions", ()),  # a mistake of the statement
]


@pytest.mark.parametrize(("sql", "params"), STATEMENTS)
def test_a_statement_gives_the_same_on_both_clients(
    apart: dict[str, Any], sql: str, params: Any
) -> None:
    outcomes = {name: _outcome(conn, sql, params) for name, conn in apart.items()}
    assert outcomes["psycopg"] == outcomes["libpq"]


def test_values_keep_their_python_types(both: dict[str, Any]) -> None:
    """Integers, floats, booleans and whole numerics as the binding gives them; a JSON
    value as its text, not psycopg's ``dict``."""
    row = both["psycopg"].execute(*STATEMENTS[0]).fetchone()
    none = type(None)
    assert [type(v) for v in row] == [int, float, bool, str, none, float, int, none, str]
    assert row["j"].replace(" ", "") == '{"k":3}'


def test_the_writers_lock_is_held_across_clients(both: dict[str, Any]) -> None:
    """A console's writer (psycopg) and a hook's (libpq) wait for each other, and the
    one that waits past its lock timeout says the room is locked, in the same words."""
    said = []
    for first, second in (("psycopg", "libpq"), ("libpq", "psycopg")):
        both[first].begin_write()
        assert both[first].in_transaction
        with pytest.raises(sqlite3.OperationalError, match="database is locked") as locked:
            both[second].begin_write()
        said.append(str(locked.value))
        assert both[second].in_transaction  # the failed BEGIN's transaction, to roll back
        both[second].execute("ROLLBACK")
        both[first].execute("COMMIT")
        both[second].begin_write()
        both[second].execute("COMMIT")
    assert said[0] == said[1]


def test_every_connection_has_the_rooms_lock_timeout(pg_url: str, connect: Connect) -> None:
    """Set by the first statement, with the schema's version; in a room not made yet the
    two fail together, and the timeout is set again."""
    for timeout, shown in ((2.5, "2500ms"), (1.5, "1500ms")):  # a new room, then made
        conn = connect(pg_url, timeout=timeout)
        try:
            assert conn.execute("SHOW lock_timeout").fetchone()[0] == shown
        finally:
            conn.close()


def test_a_room_of_a_newer_schema_is_refused_alike(pg_url: str) -> None:
    made = postgres.connect(pg_url)
    made.execute("UPDATE agent_room_schema SET version = version + 1")
    made.close()
    said = []
    for connect in CLIENTS.values():
        with pytest.raises(RoomUnavailable, match="newer than this agent-room") as refused:
            connect(pg_url)
        said.append(str(refused.value))
    assert said[0] == said[1]


def test_a_server_that_cannot_be_reached_is_said_alike(pg_url: str, pg_cluster: Cluster) -> None:
    unreachable = pg_url.replace(f":{pg_cluster.port}/", ":1/")
    said = []
    for connect in CLIENTS.values():
        with pytest.raises(RoomUnavailable, match="is unreachable") as failed:
            connect(unreachable, timeout=2.0)
        said.append(str(failed.value))
    assert said[0] == said[1]


def _last_column(cursor: Any) -> str:
    return str(cursor.description[-1][0])


def test_statements_psycopg_prepared_outlive_a_migration_by_another_process(
    pg_url: str,
) -> None:
    """A console or watch runs on while a newer agent-room adds a column to a table they
    read with ``SELECT *``: the statements psycopg prepared for it no longer fit ("cached
    plan must not change result type"). Outside a transaction the statement is run again
    on a new connection; inside one, that transaction fails and the next one works."""
    conn = psycopg_conn.connect(pg_url, timeout=2.0)
    newer = postgres.connect(pg_url, timeout=2.0)
    hosts, sessions = (
        "SELECT * FROM hosts WHERE host = $1",
        "SELECT * FROM sessions WHERE name = $1",
    )
    repeats = (psycopg_conn.PREPARE_THRESHOLD or 0) + 2
    try:
        for _ in range(repeats):
            conn.execute(hosts, ("laptop",))
        newer.execute("ALTER TABLE hosts ADD COLUMN added integer")
        assert _last_column(conn.execute(hosts, ("laptop",))) == "added"
        for _ in range(repeats):
            conn.execute(sessions, ("api",))
        newer.execute("ALTER TABLE sessions ADD COLUMN added integer")
        conn.begin_write()
        with pytest.raises(sqlite3.OperationalError, match="cached plan"):
            conn.execute(sessions, ("api",))
        conn.execute("ROLLBACK")
        conn.begin_write()
        assert _last_column(conn.execute(sessions, ("api",))) == "added"
        conn.execute("COMMIT")
    finally:
        conn.close()
        newer.close()
