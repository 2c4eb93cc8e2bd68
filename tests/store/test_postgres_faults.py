"""A room on PostgreSQL whose server goes away for a while: hooks go on at once and log
it, ``send`` says the room is unreachable and fails, nothing acknowledged is lost, and
a long-lived connection (a worker's) works again once the server is back.

A cluster of its own: stopping it must not disturb the other tests of the run.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.hooks import HOOK_BUDGET, _passing
from agent_room.turn.store.engine import describe
from agent_room.turn.store.postgres import unopened
from tests.conftest import Cli, throwaway_cluster, write_room_conf
from tests.fakes import IdleMux
from tests.hooks.conftest import Hook, new_session, one_logged_line, room_rows
from tests.pgcluster import Cluster
from tests.poll import wait_for


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[Cluster]:
    """A cluster of this module's own: its tests stop the server."""
    yield from throwaway_cluster()


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
    home, cluster = down
    started = time.monotonic()
    session = new_session("SessionStart")
    code, out, err = Hook(home, agent_proc.pid)("SessionStart", session)
    assert (code, out, err) == (0, None, "")
    assert time.monotonic() - started < HOOK_BUDGET + 1  # tried again, briefly
    line = one_logged_line(home)
    assert "unreachable" in line
    assert "password" not in line.lower()
    cluster.start()
    rows = room_rows(home)
    assert session["session_id"] not in repr(rows)  # nothing of the hook, even in part
    assert len(rows["sessions"]) == 2


def test_a_hook_written_while_the_server_restarts_lands_when_it_is_back(
    down: tuple[Path, Cluster], agent_proc: subprocess.Popen[bytes]
) -> None:
    """The server comes back within the hook's budget: its write lands, nothing is
    logged (a hook tries again while the room is out of reach)."""
    home, cluster = down
    session = new_session("SessionStart")
    back = threading.Timer(0.3, cluster.start)  # (a loaded machine takes seconds to start it)
    back.start()
    try:
        code, out, err = Hook(home, agent_proc.pid)("SessionStart", session)
    finally:
        back.join()
    assert code == 0
    assert err == ""
    assert out is not None  # the room answered: the session registered
    assert not (home / "errors.log").exists()
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    try:
        assert room.store.session(session["session_id"]) is not None
    finally:
        room.close()


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


@pytest.mark.parametrize("long_lived", [True, False], ids=["psycopg", "libpq"])
def test_a_workers_connection_comes_back_with_the_server(
    tmp_path: Path, own_cluster: Cluster, long_lived: bool
) -> None:
    """On either client (a worker's is psycopg's; the libpq binding's behaves alike):
    the server gone is said as the room unreachable, and the next statement once it is
    back opens the connection again."""
    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    room = Room.open({"AGENT_ROOM_HOME": str(home)}, long_lived=long_lived)
    room.join("api")
    own_cluster.stop("immediate")
    try:
        with pytest.raises(sqlite3.OperationalError) as gone:
            room.store.members()
        assert str(gone.value) == (
            f"the room's database {describe(room.store.url or '')} is unreachable"
        )
        with pytest.raises(sqlite3.OperationalError, match="unreachable"):
            room.store.members()  # still away: opening it again fails alike
    finally:
        own_cluster.start()

    def members() -> list[str] | None:
        try:
            return [m["name"] for m in room.store.members()]
        except sqlite3.OperationalError:
            return None  # not back yet

    assert wait_for(members, step=0.2, what="the server back") == ["api"]
    room.close()


def _hook_probe(home: Path, agent_pid: int, probe: str) -> str:
    """What ``probe`` (a fresh interpreter running a SessionStart hook of the room at
    ``home``) writes to stderr."""
    env = {"AGENT_ROOM_HOME": str(home), "CLAUDE_PID": str(agent_pid), "PATH": "/bin"}
    payload = json.dumps(new_session("SessionStart")).encode()
    result = subprocess.run(
        [sys.executable, "-c", probe], input=payload, capture_output=True, env=env, check=True
    )
    return result.stderr.decode()


def test_a_hook_on_postgresql_loads_no_psycopg(
    tmp_path: Path, own_cluster: Cluster, agent_proc: subprocess.Popen[bytes]
) -> None:
    """psycopg costs a hook 80 ms to import: the hooks reach the room through libpq."""
    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    probe = (
        "import sys; from agent_room.cli import main; code = main(['hook', 'SessionStart']);"
        " print(code, 'psycopg' in sys.modules, file=sys.stderr)"
    )
    stderr = _hook_probe(home, agent_proc.pid, probe)
    assert stderr.split()[-2:] == ["0", "False"]
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    try:
        assert len(room.store.members()) == 1  # registered, on PostgreSQL
    finally:
        room.close()


def test_a_hook_on_postgresql_connects_while_it_imports_its_handlers(
    tmp_path: Path, own_cluster: Cluster, agent_proc: subprocess.Popen[bytes]
) -> None:
    """Loading libpq and connecting (about 10 ms) overlap the handlers' imports: the
    connection is begun before they load, and is the one the room then uses."""
    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    probe = (
        "import sys; from agent_room.turn.store import libpq; begin = libpq.connect_early\n"
        "def early(*given):\n"
        "    print('handlers loaded:', 'agent_room.turn.hooks.handlers' in sys.modules,"
        " file=sys.stderr); begin(*given)\n"
        "libpq.connect_early = early\n"
        "from agent_room.cli import main; code = main(['hook', 'SessionStart'])\n"
        "print('left over:', len(libpq._early), 'exit:', code, file=sys.stderr)"
    )
    stderr = _hook_probe(home, agent_proc.pid, probe)
    assert stderr.splitlines()[-2:] == [
        "handlers loaded: False",
        "left over: 0 exit: 0",
    ]
    assert not (home / "errors.log").exists()


def test_send_on_postgresql_connects_while_it_loads_the_room(
    tmp_path: Path, own_cluster: Cluster
) -> None:
    """As a hook does: the connection is begun before the room's modules load, and is
    the one the room then uses."""
    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    room.join("api")
    room.join("web")
    room.close()
    probe = (
        "import sys; from agent_room.turn.store import libpq; begin = libpq.connect_early\n"
        "def early(*given):\n"
        "    print('room loaded:', 'agent_room.room' in sys.modules, file=sys.stderr)\n"
        "    begin(*given)\n"
        "libpq.connect_early = early\n"
        "from agent_room.cli import main; code = main(['send', '@web', 'hello'])\n"
        "print('left over:', len(libpq._early), 'exit:', code, file=sys.stderr)"
    )
    env = {"AGENT_ROOM_HOME": str(home), "AGENT_ROOM_NAME": "api", "PATH": "/bin"}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, env=env, check=True)
    lines = result.stderr.decode().splitlines()
    assert lines[0] == "room loaded: False"
    assert lines[-1] == "left over: 0 exit: 0"
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    try:
        assert [m["body"] for m in room.store.unread("web")] == ["hello"]
    finally:
        room.close()


OUTAGE = 10.0
"""How long the server stays away in the outage test (the issue's ten seconds)."""


def _typed_once(typed: list[str], message_id: int) -> bool:
    return sum(f"#{message_id}" in t for t in typed) == 1


def test_ten_seconds_without_the_server_lose_nothing(
    tmp_path: Path, own_cluster: Cluster, agent_proc: subprocess.Popen[bytes]
) -> None:
    """The server stopped for ten seconds: hooks go on at once, ``send`` fails clearly,
    the watcher goes on and resumes by itself; every message acknowledged before or
    after is typed exactly once."""
    from agent_room.workers.deliverer import Deliverer
    from tests.ui.seed import AliveProbe

    home = tmp_path / "room"
    write_room_conf(home, own_cluster.new_room(f"room_{time.monotonic_ns()}"))
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    room.join("api")
    room.store.register(
        {"session_id": "s-web", "state": "idle", "pane": "%1", "pid": 1, "pid_start": 1},
        wanted="web",
        explicit=True,
        at=room.clock(),
        alive=lambda *_: True,
    )
    typist = IdleMux()
    worker_room = Room.open({"AGENT_ROOM_HOME": str(home)}, long_lived=True)  # as watch's
    worker = Deliverer(worker_room, typist, AliveProbe())  # type: ignore[arg-type]
    stop = threading.Event()
    problems: list[str | None] = []
    thread = threading.Thread(
        target=worker.run, args=(stop,), kwargs={"on_problem": problems.append}, daemon=True
    )
    thread.start()
    try:
        before = room.send("api", "web", "before the outage")
        wait_for(lambda: any(f"#{before}" in t for t in typist.typed))
        room.store.mark_delivered("web", [before], at=room.clock(), via="nudge")  # its hook
        room.close()
        own_cluster.stop("immediate")
        stopped = time.monotonic()
        wait_for(lambda: problems, timeout=10)  # the watcher noticed, and goes on
        assert "unreachable" in str(problems[0])
        hook_started = time.monotonic()
        hooked = Hook(home, agent_proc.pid)("SessionStart", new_session("SessionStart"))
        assert hooked == (0, None, "")
        assert time.monotonic() - hook_started < HOOK_BUDGET + 1
        assert "unreachable" in (home / "errors.log").read_text()
        refused = Cli(home)("send", "@web", "during the outage", name="api")
        assert refused.code != 0
        assert "unreachable" in refused.err
        assert "Traceback" not in refused.err
        time.sleep(max(0.0, OUTAGE - (time.monotonic() - stopped)))
        assert thread.is_alive()
        said = [str(p) for p in problems if p]  # an outage, said once, not a busy room
        assert not [p for p in said if "busy" in p or "database: the room's database" in p]
        own_cluster.start()
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        after = room.send("api", "web", "after the outage")
        wait_for(lambda: any(f"#{after}" in t for t in typist.typed), timeout=20)
        room.store.mark_delivered("web", [after], at=room.clock(), via="nudge")
        assert thread.is_alive()
        time.sleep(1.5)  # a second typing of either would have happened by now
        assert _typed_once(typist.typed, before)
        assert _typed_once(typist.typed, after)
        bodies = [(m["body"], m["status"]) for m in room.history(10)]
        assert bodies == [
            ("before the outage", "delivered"),
            ("after the outage", "delivered"),
        ]
    finally:
        stop.set()
        thread.join(timeout=10)
        own_cluster.start()


@pytest.mark.parametrize(
    ("answer", "passing"),
    [
        ("FATAL:  the database system is starting up", True),
        (
            "FATAL:  the database system is not yet accepting connections\n"
            "DETAIL:  Consistent recovery state has not been yet reached.",
            True,
        ),
        ("FATAL:  the database system is shutting down", True),
        ('FATAL:  password authentication failed for user "room"', False),
        ('FATAL:  database "rooms" does not exist', False),
    ],
)
def test_a_restarting_server_is_a_passing_fault_and_a_refusal_is_not(
    answer: str, passing: bool
) -> None:
    """A server that answers while it restarts (SQLSTATE 57P03) is not there yet: a hook
    tries again within its budget, as for one that does not answer. A wrong password or
    database is said at once."""
    problem = RoomUnavailable(unopened("PostgreSQL at db:5432", answer))
    assert _passing(problem) is passing
    assert "\n" not in str(problem)
