"""The ctypes binding of libpq (``store.libpq``) that the room's short processes use:
loading it lets the rest of the process go on, and what it sends and reads back against
the real server of the run.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_room.turn.store import libpq
from agent_room.turn.store.postgres import connect
from tests.pgcluster import Cluster

LOADER = """
import os, sys, threading
from agent_room.turn.store import libpq

said = []
def load():
    try:
        libpq._dlopen(sys.argv[1])
    except OSError as exc:
        said.append(str(exc))
loader = threading.Thread(target=load)
loader.start()
fd = os.open(sys.argv[1], os.O_WRONLY)  # Python code, while the loader waits in dlopen
os.write(fd, b"not a library")
os.close(fd)
loader.join()
print(*said)
"""


def test_loading_the_library_lets_the_other_threads_run(tmp_path: Path) -> None:
    """A long-lived process's other threads (a console's, a watcher's) go on while
    libpq loads: the loader must not hold the GIL. Here it loads a FIFO, which the
    dynamic linker waits on until the main thread (Python code) opens it: holding the
    GIL, the two would wait for each other for ever."""
    fifo = tmp_path / "library"
    os.mkfifo(fifo)
    try:
        done = subprocess.run(
            [sys.executable, "-c", LOADER, str(fifo)],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("loading the library held the GIL: the process stood still") from None
    assert done.stdout.startswith(f"{fifo}: ")  # the dynamic linker's reason, named


def test_connect_early_returns_once_the_thread_is_connecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Connecting and the first question are what a hook waits for: the thread must not
    wait for the GIL until the hook's imports let go of it."""
    began = threading.Event()

    class Library:
        def PQconnectdb(self, _info: bytes) -> None:
            began.set()

        def PQstatus(self, _handle: None) -> int:
            return 1

    monkeypatch.setattr(libpq, "_lib", Library())
    libpq.connect_early("host=/nonexistent", "SELECT 1")
    seen = began.is_set()
    assert libpq._connected("host=/nonexistent", "SELECT 1") == [None]
    assert seen
    assert sys.getswitchinterval() == libpq._SWITCH


class Counted:
    """libpq with the statements each thread sends counted (a round trip each)."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.sent: dict[int, list[str]] = {}

    def __getattr__(self, name: str) -> Any:
        function = getattr(self.lib, name)
        if name not in ("PQexec", "PQexecParams"):
            return function

        def send(handle: Any, sql: bytes, *rest: Any) -> Any:
            self.sent.setdefault(threading.get_ident(), []).append(sql.decode())
            return function(handle, sql, *rest)

        return send

    def by_this_thread(self) -> list[str]:
        return self.sent.get(threading.get_ident(), [])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    spy = Counted(libpq._load())
    monkeypatch.setattr(libpq, "_lib", spy)
    return spy


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """An existing room (its schema made and migrated) on the run's cluster."""
    url = pg_cluster.new_room(f"room_{os.urandom(6).hex()}")
    connect(url).close()
    return url


def test_values_come_back_as_python_values(pg_url: str) -> None:
    conn = libpq.Connection(*libpq.opening(pg_url, 5.0))
    try:
        row = conn.execute(
            "SELECT $1::bigint, $2::float8, $3::boolean, $4::text, $5::text, 2.5::numeric,"
            " 7::numeric, NULL",
            [-(2**40), 0.1, True, "é ✓ \\ '", None],
        ).rows[0]
    finally:
        conn.close()
    assert row == (-(2**40), 0.1, True, "é ✓ \\ '", None, 2.5, 7, None)


def test_a_script_is_one_round_trip_and_stops_at_its_first_error(
    pg_url: str, counted: Counted
) -> None:
    conn = libpq.Connection(*libpq.opening(pg_url, 5.0))
    try:
        before = len(counted.by_this_thread())
        assert conn.script("SELECT 1; SELECT 2 AS two").rows == [(2,)]
        with pytest.raises(libpq.PgError) as failed:
            conn.script("CREATE TEMP TABLE t (a int); SELECT nothing; DROP TABLE t")
        assert failed.value.sqlstate == "42703"
        assert not conn.in_transaction
        assert len(counted.by_this_thread()) == before + 2
        with pytest.raises(libpq.PgError):
            conn.execute("SELECT * FROM t")  # the failed script wrote nothing
    finally:
        conn.close()


def test_a_connection_begun_early_asks_its_first_question_in_its_own_thread(
    pg_url: str, counted: Counted
) -> None:
    """A hook's main thread, once its handlers are loaded, finds the room open and its
    version read: it sends nothing before its own first statement."""
    libpq.connect_early(*libpq.opening(pg_url, 3.0))
    conn = connect(pg_url, timeout=3.0)
    try:
        assert counted.by_this_thread() == []
        assert sum(len(sent) for sent in counted.sent.values()) == 1
    finally:
        conn.close()


def test_begin_immediate_takes_the_writers_lock_in_one_round_trip(
    pg_url: str, counted: Counted
) -> None:
    writer, other = connect(pg_url, timeout=0.5), connect(pg_url, timeout=0.5)
    try:
        before = len(counted.by_this_thread())
        writer.begin_write()
        assert len(counted.by_this_thread()) == before + 1
        assert writer.in_transaction
        with pytest.raises(sqlite3.OperationalError, match="database is locked"):
            other.begin_write()  # waits for the lock: its timeout
        other.execute("ROLLBACK")
        writer.execute("COMMIT")
        other.begin_write()
        other.execute("COMMIT")
    finally:
        writer.close()
        other.close()


def test_every_connection_has_the_rooms_lock_timeout(pg_cluster: Cluster, pg_url: str) -> None:
    """Set by the first statement, with the schema's version; in a room not made yet the
    two fail together (one implicit transaction), and the timeout is set again."""
    new_room = pg_cluster.new_room(f"room_{os.urandom(6).hex()}")
    libpq.connect_early(*libpq.opening(pg_url, 1.5))
    for conn in connect(new_room, timeout=2.5), connect(pg_url, timeout=1.5):
        try:
            row = conn.execute("SHOW lock_timeout").fetchone()
        finally:
            conn.close()
        assert row is not None
        assert row[0] == ("2500ms" if conn.url == new_room else "1500ms")


def test_the_libpq_is_the_one_psycopg_runs_on() -> None:
    """psycopg's binary package brings its own libpq: the hooks load that one too (one
    libpq for every process of the room, and a dozen libraries to load, not a score)."""
    import psycopg

    ours = os.path.realpath(libpq._load()._name)
    assert psycopg.pq.__impl__ == "binary"
    assert os.path.dirname(ours).endswith("psycopg_binary.libs")
    with open("/proc/self/maps") as maps:
        loaded = {line.split()[-1] for line in maps if "libpq" in line}
    assert loaded == {ours}  # psycopg's, once: the same file
