"""A room on PostgreSQL whose server goes away for a while: hooks go on at once and log
it, ``send`` says the room is unreachable and fails, nothing acknowledged is lost, and
a long-lived connection (a worker's) works again once the server is back.

A cluster of its own: stopping it must not disturb the other tests of the run.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.room import Room
from tests.conftest import Cli, require_tool, write_room_conf
from tests.hooks.conftest import Hook, new_session
from tests.pgcluster import Cluster, server_bin


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[Cluster]:
    bindir = server_bin()
    require_tool(bindir is not None, "PostgreSQL's server (Debian's postgresql package)")
    assert bindir is not None
    cluster = Cluster(bindir)
    yield cluster
    cluster.destroy()


@pytest.fixture
def down(tmp_path: Path, own_cluster: Cluster) -> Iterator[tuple[Path, Cluster]]:
    """A room with two members, whose server is stopped; started again afterwards."""
    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    room.join("api")
    room.join("web")
    room.send("api", "web", "acknowledged before the outage")
    room.close()
    own_cluster.stop("immediate")
    yield home, own_cluster
    own_cluster.start()


def test_a_hook_exits_at_once_and_logs_the_unreachable_room(
    down: tuple[Path, Cluster], agent_proc: subprocess.Popen[bytes]
) -> None:
    home, _cluster = down
    started = time.monotonic()
    code, out, err = Hook(home, agent_proc.pid)("SessionStart", new_session("SessionStart"))
    assert (code, out, err) == (0, None, "")
    assert time.monotonic() - started < 3
    (line,) = (home / "errors.log").read_text().splitlines()
    assert "unreachable" in line
    assert "password" not in line.lower()


def test_send_fails_clearly_and_nothing_is_lost(down: tuple[Path, Cluster]) -> None:
    home, cluster = down
    cli = Cli(home)
    sent = cli("send", "@web", "during the outage", name="api")
    assert sent.code != 0
    (line,) = sent.err.splitlines()
    assert "unreachable" in line
    assert "Traceback" not in sent.err
    cluster.start()
    again = cli("send", "@web", "after the outage", name="api")
    assert again.code == 0, again.err
    bodies = [m["body"] for m in Room.open({"AGENT_ROOM_HOME": str(home)}).history(10)]
    assert bodies == ["acknowledged before the outage", "after the outage"]


def test_a_workers_connection_comes_back_with_the_server(
    tmp_path: Path, own_cluster: Cluster
) -> None:
    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    room.join("api")
    own_cluster.stop("immediate")
    try:
        with pytest.raises(sqlite3.OperationalError, match="unreachable"):
            room.store.members()
    finally:
        own_cluster.start()
    deadline = time.monotonic() + 10
    while True:
        try:
            assert [m["name"] for m in room.store.members()] == ["api"]
            break
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    room.close()


def test_the_hooks_path_on_postgresql_stays_quick(tmp_path: Path, own_cluster: Cluster) -> None:
    """Importing the store with a PostgreSQL room loads psycopg only when it is used."""
    probe = "import sys, agent_room.hooks; print('psycopg' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
