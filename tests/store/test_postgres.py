"""The room on PostgreSQL, in every pass: the setting that chooses it, credentials kept
out of sight, hosts, the wake-ups of LISTEN/NOTIFY.

Each test makes its own room (a schema) in the run's throw-away cluster, whichever
engine the rest of the pass uses.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agent_room.mcp.tools import Rooms
from agent_room.room.roster import session_tree
from agent_room.room.service import Room
from agent_room.store.psycopg_conn import PsycopgConnection
from agent_room.turn.core.errors import RoomUnavailable, UnsafeRoom
from agent_room.turn.room.registry import Registry
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.engine import database_url, describe
from agent_room.turn.store.hosts import SILENT_AFTER, host_seen
from agent_room.turn.store.urls import has_password
from agent_room.turn.store.wake import listening
from agent_room.ui.app import make_app
from agent_room.ui.settings import ConsoleSettings
from agent_room.workers.wakeup import RoomWatch
from tests.conftest import Cli, write_room_conf
from tests.fakes import FakeMux
from tests.hooks.conftest import new_session
from tests.pgcluster import Cluster
from tests.poll import wait_for


class Probe:
    """Every process of this host is dead (those of other hosts cannot be asked)."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        return False


@pytest.fixture
def pg_home(tmp_path: Path, pg_cluster: Cluster) -> Path:
    home = tmp_path / "pgroom"
    write_room_conf(home, pg_cluster.new_room(f"room_{time.monotonic_ns()}"))
    return home


def _open(home: Path, host: str, monkeypatch: pytest.MonkeyPatch) -> Room:
    monkeypatch.setenv("AGENT_ROOM_HOST", host)
    return Room.open({"AGENT_ROOM_HOME": str(home)})


@pytest.fixture
def hosts(pg_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Room, Room]]:
    """The same room seen from two machines, ``laptop`` and ``devbox``."""
    laptop, devbox = _open(pg_home, "laptop", monkeypatch), _open(pg_home, "devbox", monkeypatch)
    yield laptop, devbox
    laptop.close()
    devbox.close()


def _register(room: Room, name: str, pid: int) -> None:
    room.store.register(
        {"session_id": f"s-{name}", "state": "idle", "pid": pid, "pid_start": 1},
        wanted=name,
        explicit=True,
        at=room.clock(),
        alive=lambda *_: True,
    )


def _state(room: Room, session_id: str) -> str:
    row = room.store.session(session_id)
    assert row is not None
    return str(row["state"])


def test_the_room_conf_chooses_postgresql_and_the_sqlite_file_is_never_made(
    pg_home: Path,
) -> None:
    room = Room.open({"AGENT_ROOM_HOME": str(pg_home)})
    try:
        assert room.store.engine == "postgresql"
        room.join("api")
        assert [m["name"] for m in room.store.members()] == ["api"]
    finally:
        room.close()
    assert not (pg_home / "room.db").exists()


def test_a_room_conf_open_to_others_is_refused(pg_home: Path) -> None:
    (pg_home / "room.conf").chmod(0o644)
    with pytest.raises(UnsafeRoom, match="chmod 600"):
        database_url(str(pg_home), {})


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("database = mysql://db/x", "room.conf line 2: database must be a postgresql:// URL"),
        ("database postgresql://room@db/x", "room.conf line 2: not `key = value`"),
        ("databse = postgresql://room@db/x", "room.conf line 2: unknown setting databse"),
    ],
)
def test_a_room_conf_it_cannot_follow_is_refused_not_passed_over(
    tmp_path: Path, line: str, said: str
) -> None:
    """A typo must not leave one host on a SQLite room of its own."""
    home = tmp_path / "typo"
    home.mkdir(mode=0o700)
    (home / "room.conf").touch(mode=0o600)
    (home / "room.conf").write_text(f"# the team's room\n{line}\n")
    with pytest.raises(UnsafeRoom, match=said):
        database_url(str(home), {})


def test_a_password_is_never_shown() -> None:
    url = "postgresql://room:s3cret@db.example:5432/agentroom?sslmode=verify-full"
    assert describe(url) == "postgresql://room@db.example:5432/agentroom"
    assert has_password(url)
    assert has_password("postgresql://db/x?password=s3cret")
    assert not has_password("postgresql://room@db/x?sslmode=require")


def test_the_room_shown_names_its_schema() -> None:
    """Several rooms share a database: what is shown says which one, never a password."""
    url = "postgresql://room:s3cret@db/agentroom?options=-csearch_path%3Dteam&password=s3cret"
    assert describe(url) == "postgresql://room@db/agentroom (schema team)"
    spaced = "postgresql://room@db/agentroom?options=-c%20search_path%3D%22Team%22%2Cpublic"
    assert describe(spaced) == 'postgresql://room@db/agentroom (schema "Team")'
    assert describe("postgresql://db/x?options=%zz") == "postgresql://db/x"


def test_a_session_is_judged_alive_only_on_its_own_host(hosts: tuple[Room, Room]) -> None:
    laptop, devbox = hosts
    _register(laptop, "api", pid=4242)
    _register(devbox, "web", pid=4242)
    assert {m["name"]: m["host"] for m in laptop.store.members()} == {
        "api": "laptop",
        "web": "devbox",
    }
    assert Registry(laptop, Probe()).refresh() == ["s-api"]  # not devbox's session
    assert _state(laptop, "s-web") == "idle"
    assert Registry(devbox, Probe()).refresh() == ["s-web"]


def test_each_host_delivers_only_to_its_own_sessions(hosts: tuple[Room, Room]) -> None:
    laptop, devbox = hosts
    _register(laptop, "api", pid=1)
    _register(devbox, "web", pid=2)
    laptop.send("api", "web", "over to you")
    devbox.send("web", "api", "and back")
    assert [t["name"] for t in laptop.store.delivery_targets()] == ["api"]
    assert [t["name"] for t in devbox.store.delivery_targets()] == ["web"]


def _take(room: Room, holder: str, at: float) -> bool:
    """Take the notifier's lease for a process this host finds dead."""
    return room.store.acquire_lease(
        "notifier", holder=holder, pid=99, pid_start=1, ttl=10.0, at=at, alive=lambda *_: False
    )


def test_another_hosts_lease_lapses_only_by_time(hosts: tuple[Room, Room]) -> None:
    laptop, devbox = hosts
    assert _take(devbox, "d", 100.0)
    assert not _take(laptop, "l", 105.0)  # its pid is devbox's: not judged from here
    assert _take(laptop, "l", 111.0)


def test_a_silent_hosts_sessions_are_unknown_not_ended(hosts: tuple[Room, Room]) -> None:
    laptop, devbox = hosts
    _register(devbox, "web", pid=2)
    host_seen(devbox.store, at=devbox.clock(), pid=2)
    assert laptop.who()[0]["state"] == "idle"
    laptop.clock = lambda: time.time() + SILENT_AFTER + 1
    (web,) = laptop.who()
    assert (web["state"], web["host"]) == ("unknown", "devbox")
    (node,) = session_tree(laptop)
    assert node.state == "unknown"
    assert _state(devbox, "s-web") == "idle"  # the record is untouched


def test_a_message_from_another_host_wakes_the_watch_at_once(
    hosts: tuple[Room, Room],
) -> None:
    laptop, devbox = hosts
    stop = threading.Event()
    watch = RoomWatch(laptop.home, debounce=10, step=5, stop=stop)
    heard: list[float] = []
    watch.subscribe(lambda: heard.append(time.monotonic()), want=lambda p: p.endswith("room.db"))
    try:
        time.sleep(0.5)  # the listener is connected
        heard.clear()
        sent = time.monotonic()
        devbox.join("web")
        wait_for(lambda: heard, timeout=5)
        assert heard[0] - sent < 0.5
    finally:
        stop.set()
        watch.join()


def test_a_hosts_watcher_wakes_only_for_its_own_hosts_sessions(
    hosts: tuple[Room, Room],
) -> None:
    """A message to a session on laptop wakes laptop's deliverer and every console, not
    devbox's deliverer; one to devbox wakes devbox's."""
    laptop, devbox = hosts
    _register(laptop, "api", pid=1)
    _register(devbox, "web", pid=2)
    stop = threading.Event()
    watch = RoomWatch(laptop.home, debounce=10, step=5, stop=stop)
    heard: dict[str, list[float]] = {"laptop": [], "devbox": [], "console": []}
    for name in ("laptop", "devbox"):
        watch.subscribe(lambda n=name: heard[n].append(1), host=name)  # type: ignore[misc]
    watch.subscribe(lambda: heard["console"].append(1))
    try:
        time.sleep(0.5)  # the listener is connected
        for found in heard.values():
            found.clear()
        laptop.send("web", "api", "for laptop")
        wait_for(lambda: heard["laptop"] and heard["console"], timeout=5)
        time.sleep(0.3)
        assert heard["devbox"] == []
        devbox.send("api", "web", "for devbox")
        wait_for(lambda: heard["devbox"], timeout=5)
    finally:
        stop.set()
        watch.join()


def test_notifications_that_arrive_together_wake_every_host_they_name(
    hosts: tuple[Room, Room], pg_home: Path
) -> None:
    """One commit telling two hosts (a message to each host's session, say) wakes both
    hosts' deliverers: the watch takes each packet of notifications whole."""
    laptop, _devbox = hosts
    stop = threading.Event()
    watch = RoomWatch(laptop.home, debounce=10, step=5, stop=stop)
    heard: dict[str, list[int]] = {"laptop": [], "devbox": []}
    for name in heard:
        watch.subscribe(lambda n=name: heard[n].append(1), host=name)  # type: ignore[misc]
    url = database_url(str(pg_home))
    assert url is not None
    try:
        time.sleep(0.5)  # the listener is connected
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_notify('agent_room', current_schema() || E'\\tlaptop'),"
                " pg_notify('agent_room', current_schema() || E'\\tdevbox')"
            )
        wait_for(lambda: heard["laptop"] and heard["devbox"], timeout=5)
    finally:
        stop.set()
        watch.join()


def test_every_change_the_room_shows_wakes_the_consoles_watch_a_renewal_does_not(
    hosts: tuple[Room, Room],
) -> None:
    """The console reads a PostgreSQL room only when its watch heard a change (``Reading``):
    every commit that changes what the room shows notifies, those no trigger covers too (a
    session's folder), and a new holder of a lease; a renewal by its holder does not."""
    laptop, devbox = hosts
    _register(devbox, "web", pid=2)
    stop = threading.Event()
    watch = RoomWatch(laptop.home, debounce=10, step=5, stop=stop)
    heard: list[int] = []
    watch.subscribe(lambda: heard.append(1), want=lambda p: p.endswith("room.db"))

    def lease(holder: str, at: float) -> None:
        assert devbox.store.acquire_lease(
            "memory@devbox", holder=holder, pid=2, pid_start=None, ttl=3.0, at=at,
            alive=lambda *_: True,
        )  # fmt: skip

    try:
        time.sleep(0.5)  # the listener is connected
        heard.clear()
        lease("worker-1", 1000.0)  # a new holder: the status bar shows it
        wait_for(lambda: heard, timeout=5)
        heard.clear()
        for n in range(3):
            lease("worker-1", 1001.0 + n)
        time.sleep(0.5)
        assert heard == []
        with write_transaction(devbox.store.conn) as conn:
            conn.execute("UPDATE sessions SET cwd = $1 WHERE session_id = $2", ("/srv/b", "s-web"))
        wait_for(lambda: heard, timeout=5)
    finally:
        stop.set()
        watch.join()


def test_who_and_tree_say_where_each_session_runs(hosts: tuple[Room, Room], pg_home: Path) -> None:
    laptop, devbox = hosts
    _register(laptop, "api", pid=1)
    _register(devbox, "web", pid=2)
    cli = Cli(pg_home)
    header, *rows = cli("who").out.splitlines()
    assert header.split()[:4] == ["NAME", "STATE", "AGENT", "HOST"]
    assert [row.split()[3] for row in rows] == ["laptop", "devbox"]
    # seen from devbox (this process's host): its own web is judged (its pid is gone),
    # laptop's api cannot be, laptop's watcher never having been seen
    assert cli("tree").out == "api [unknown] on laptop\nweb [ended] on devbox\n"


def test_the_schema_named_first_in_search_path_is_made_on_first_use(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    """A newcomer names a room by its schema and nothing more: the schema is made."""
    schema = f"fresh_{time.monotonic_ns()}"
    home = tmp_path / "fresh"
    write_room_conf(home, pg_cluster.passfile_url(pg_cluster.url(schema)))
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    try:
        room.join("api")
        assert [m["name"] for m in room.store.members()] == ["api"]
    finally:
        room.close()
    made = pg_cluster.psql(f"SELECT count(*) FROM {schema}.sessions", "agentroom")
    assert made.strip() == "1"


def test_a_refused_password_says_so_in_one_line(tmp_path: Path, pg_cluster: Cluster) -> None:
    """libpq's reason spans lines; the user sees the server's answer, not the last line."""
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg_cluster.port}:*:room:not-the-password\n")
    passfile.chmod(0o600)
    home = tmp_path / "wrong"
    write_room_conf(home, f"{pg_cluster.url()}?passfile={passfile}")
    with pytest.raises(RoomUnavailable) as raised:
        Room.open({"AGENT_ROOM_HOME": str(home)})
    message = str(raised.value)
    assert "password authentication failed" in message
    assert "\n" not in message
    assert "not-the-password" not in message


def test_a_pane_id_names_a_session_of_this_host_only(hosts: tuple[Room, Room]) -> None:
    """Pane ids are per tmux server: %0 on the laptop is not %0 on devbox."""
    laptop, devbox = hosts
    laptop.join("web", pane="%0")
    assert devbox.store.holder_of_pane("%0") is None
    row = devbox.join("api", pane="%0")
    assert "renamed_from" not in row
    assert {m["name"]: m["host"] for m in laptop.store.members()} == {
        "web": "laptop",
        "api": "devbox",
    }
    assert devbox.identify(env_name=None, pane="%0", as_name=None) == "api"


def test_watch_says_which_database_and_host_it_serves(pg_home: Path) -> None:
    """The room directory is not where a PostgreSQL room lives: the watch names both."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_room", "watch"],
        env=Cli(pg_home).env({"AGENT_ROOM_HOST": "devbox"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert "postgresql://room@127.0.0.1" in first
    assert "(schema room_" in first
    assert "as host devbox" in first


def test_no_password_found_says_where_to_put_one(
    tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    home = tmp_path / "nopass"
    write_room_conf(home, pg_cluster.url())
    with pytest.raises(RoomUnavailable) as raised:
        Room.open({"AGENT_ROOM_HOME": str(home)})
    assert "~/.pgpass" in str(raised.value)


def test_who_says_why_a_silent_hosts_sessions_are_unknown(
    hosts: tuple[Room, Room], pg_home: Path
) -> None:
    _laptop, devbox = hosts
    _register(devbox, "web", pid=2)
    host_seen(devbox.store, at=time.time() - SILENT_AFTER - 5, pid=2)
    shown = Cli(pg_home)("who", env={"AGENT_ROOM_HOST": "laptop"})
    assert shown.code == 0
    assert "unknown" in shown.out
    assert f"host devbox is silent (no watch of it seen in {SILENT_AFTER:.0f} s)" in shown.err


def test_send_to_another_hosts_agent_does_not_ask_for_a_watch_here(
    hosts: tuple[Room, Room], pg_home: Path
) -> None:
    """This host's FIFO says nothing of the recipient's host: its watch delivers."""
    laptop, devbox = hosts
    laptop.join("api")
    _register(devbox, "web", pid=2)
    host_seen(devbox.store, at=time.time(), pid=2)
    laptop_cli = {"AGENT_ROOM_HOST": "laptop"}
    sent = Cli(pg_home)("send", "@web", "hello", name="api", env=laptop_cli)
    assert sent.code == 0
    assert "queued for @web\n" in sent.err
    host_seen(devbox.store, at=time.time() - SILENT_AFTER - 5, pid=2)
    sent = Cli(pg_home)("send", "@web", "hello", name="api", env=laptop_cli)
    assert "(host devbox is silent: delivered once its watch is back)" in sent.err


OPENED_BY = """
import atexit, sys
from agent_room.store.psycopg_conn import PsycopgConnection
from agent_room.turn.store.postgres import PgConnection

opened = []
for kind in (PgConnection, PsycopgConnection):
    def counted(self, *args, _init=kind.__init__, _name=kind.__name__, **kwargs):
        opened.append(_name)
        _init(self, *args, **kwargs)
    kind.__init__ = counted
atexit.register(lambda: print("opened:", *sorted(set(opened)), file=sys.stderr))
from agent_room.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""``agent-room ARGS`` in a fresh interpreter that says at its exit which clients'
connections to the room it opened."""


def test_watch_reaches_the_room_through_psycopg(pg_home: Path) -> None:
    """The long-lived watch (and the background deliverer, which is one) keeps every
    connection it opens on psycopg; the hooks' binding is not used."""
    env = {"AGENT_ROOM_HOME": str(pg_home), "PATH": "/bin:/usr/bin", "AGENT_ROOM_MCP": "off"}
    proc = subprocess.Popen(
        [sys.executable, "-c", OPENED_BY, "watch"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: listening(str(pg_home)), timeout=30, what="the watch delivering")
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    assert err.decode().splitlines()[-1] == "opened: PsycopgConnection"


def test_a_hook_and_send_reach_the_room_through_the_binding(
    pg_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    env = {"AGENT_ROOM_HOME": str(pg_home), "PATH": "/bin", "CLAUDE_PID": str(agent_proc.pid)}
    payload = json.dumps(new_session("SessionStart")).encode()
    hooked = subprocess.run(
        [sys.executable, "-c", OPENED_BY, "hook", "SessionStart"],
        input=payload, env=env, capture_output=True, check=True,
    )  # fmt: skip
    assert hooked.stderr.decode().splitlines()[-1] == "opened: PgConnection"
    room = Room.open({"AGENT_ROOM_HOME": str(pg_home)})
    (joined,) = [m["name"] for m in room.store.members()]
    room.join("web")
    room.close()
    sent = subprocess.run(
        [sys.executable, "-c", OPENED_BY, "send", "@web", "hello"],
        env={**env, "AGENT_ROOM_NAME": joined}, capture_output=True, check=True,
    )  # fmt: skip
    assert sent.stderr.decode().splitlines()[-1] == "opened: PgConnection"


def test_the_console_and_the_mcp_server_keep_the_room_on_psycopg(pg_home: Path) -> None:
    settings = ConsoleSettings.load({"AGENT_ROOM_HOME": str(pg_home)})
    console_room = make_app(settings, mux=FakeMux(), probe=Probe()).open_room()
    served = Rooms({"AGENT_ROOM_HOME": str(pg_home)})
    try:
        assert isinstance(console_room.store.conn, PsycopgConnection)
        assert isinstance(served.get().store.conn, PsycopgConnection)
    finally:
        console_room.close()
        served.drop()
