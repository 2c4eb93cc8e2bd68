"""Fixtures shared by every tier: a private room per test and a way to run the CLI."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pytest

from agent_room.cli.background import background_pid
from agent_room.room.service import Room
from agent_room.workers.background import LOG_FILE
from tests.poll import poll

if TYPE_CHECKING:
    from tests.pgcluster import Cluster

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
"""Copies of the payloads captured from the real client in ../shared/fixtures (unedited)."""


ALLOW_SKIP = "AGENT_ROOM_ALLOW_SKIP"
"""Set to 1 to let a test whose tool is missing skip (never under ``CI=true``)."""


def require_tool(found: bool, what: str) -> None:
    """Fail a test whose tool is missing: a tier that skips quietly proves nothing.

    A developer without tmux or the client opts into skipping with
    ``AGENT_ROOM_ALLOW_SKIP=1``; under ``CI=true`` a missing tool always fails.
    """
    if found:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required under CI=true")
    if os.environ.get(ALLOW_SKIP) != "1":
        pytest.fail(f"{what} is not available (set {ALLOW_SKIP}=1 to skip instead)")
    pytest.skip(f"{what} is not available ({ALLOW_SKIP}=1)")


@dataclass(frozen=True)
class Result:
    """What a command-line run left behind."""

    code: int
    out: str
    err: str


@pytest.fixture
def agent_proc() -> Iterator[subprocess.Popen[bytes]]:
    """A live process standing in for an agent (the one hooks fire for, or registered)."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


ENGINE = "AGENT_ROOM_TEST_ENGINE"
"""``postgresql``: every room of the run lives in a throw-away PostgreSQL cluster (the
suite's second engine pass); otherwise each room is its own SQLite file."""


def postgres_pass() -> bool:
    """Whether this run tests the rooms on PostgreSQL."""
    return os.environ.get(ENGINE) == "postgresql"


END_TO_END = ("real", "tmux")
"""Tiers that drive real clients and tmux servers, whose timing a loaded machine stretches."""


@pytest.hookimpl(trylast=True)  # after the folders' own hooks have marked their tiers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """An end-to-end test that fails is run once more (a test that fails twice fails the
    run; each rerun is listed in the summary); in the PostgreSQL pass, leave out the tests
    of the SQLite file itself."""
    reruns = config.pluginmanager.hasplugin("rerunfailures")  # not under -p no:rerunfailures
    for item in items:
        if reruns and any(item.get_closest_marker(tier) for tier in END_TO_END):
            item.add_marker(pytest.mark.flaky(reruns=1))
    if not postgres_pass():
        return
    left_out = [item for item in items if item.get_closest_marker("sqlite")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker("sqlite")]


def throwaway_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of Debian's server in a temporary directory, removed after."""
    from tests.pgcluster import Cluster, server_bin

    bindir = server_bin()
    require_tool(bindir is not None, "PostgreSQL's server (Debian's postgresql package)")
    assert bindir is not None
    cluster = Cluster(bindir)
    yield cluster
    cluster.destroy()


@pytest.fixture(scope="module")
def stoppable_cluster() -> Iterator[Cluster]:
    """A PostgreSQL cluster of the module's own: its tests stop and start the server."""
    yield from throwaway_cluster()


@pytest.fixture(params=["sqlite", "postgresql"])
def either_engine(request: pytest.FixtureRequest, room_home: Path) -> Cluster | None:
    """The test's room on each engine in turn: its PostgreSQL cluster (the module's
    own, which the test may stop), or None for the SQLite file. Request it before the
    fixtures that open the room."""
    if request.param == "sqlite":
        return None
    cluster: Cluster = request.getfixturevalue("stoppable_cluster")
    write_room_conf(room_home, cluster.new_room(f"room_{os.urandom(6).hex()}"))
    return cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The run's cluster, shared by every room of the PostgreSQL pass."""
    yield from throwaway_cluster()


@pytest.fixture
def room_database(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """The test room's PostgreSQL URL in the engine pass (a fresh schema), else ``None``."""
    monkeypatch.delenv("AGENT_ROOM_DATABASE", raising=False)
    if not postgres_pass():
        return None
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return cluster.new_room(f"room_{os.urandom(6).hex()}")


@pytest.fixture
def room_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, room_database: str | None
) -> Iterator[Path]:
    """A fresh, private room for this test, named by ``$AGENT_ROOM_HOME``.

    In the PostgreSQL pass the room's ``room.conf`` names its database, so every process
    given only ``$AGENT_ROOM_HOME`` (hooks, the command line, workers) finds it; another
    room a test makes beside it stays a SQLite file of its own. A background deliverer
    that a console or ``start`` began in it (as they do for a user) is ended with the
    test, not left to end by itself ten minutes later."""
    home = tmp_path / "room"
    monkeypatch.setenv("AGENT_ROOM_HOME", str(home))
    # no background deliverer from start/join: a test starts the workers it wants
    monkeypatch.setenv("AGENT_ROOM_WATCH", "off")
    for var in ("AGENT_ROOM_NAME", "TMUX_PANE", "TMUX", "CLAUDE_PID", "AGENT_ROOM_PARENT"):
        monkeypatch.delenv(var, raising=False)
    if room_database is not None:
        write_room_conf(home, room_database)
    yield home
    if (home / LOG_FILE).exists():  # a background deliverer was started: perhaps still starting
        pid = poll(lambda: background_pid(str(home)), timeout=5, step=0.1)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


def write_room_conf(home: Path, url: str) -> None:
    """Make ``home`` a room on the PostgreSQL database ``url`` (credentials: the cluster's
    password file, named in the URL)."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    conf = home / "room.conf"
    conf.touch(mode=0o600)
    conf.write_text(f"database = {url}\n")


PG_CLIENTS = ("libpq", "psycopg")
"""The two clients of a room on PostgreSQL: the short commands' libpq binding (hooks,
``send``), psycopg for the long-lived processes (the console, ``watch``, MCP)."""


@pytest.fixture
def pg_client() -> str:
    """Which client the test's room service uses on PostgreSQL (``PG_CLIENTS``): the
    short commands' unless a folder's tests run on both (``tests/store``)."""
    return "libpq"


@pytest.fixture
def room(room_home: Path, pg_client: str) -> Iterator[Room]:
    """The room service on the test's room, opened as a process of ``pg_client`` opens it."""
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)}, long_lived=pg_client == "psycopg")
    yield opened
    opened.close()


class Cli:
    """Runs ``agent-room`` as a real process against the test's room."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"AGENT_ROOM_NAME", "TMUX_PANE", "TMUX", "CLAUDE_PID"}
        }
        env["AGENT_ROOM_HOME"] = str(self.home)
        env.update(extra or {})
        return env

    def __call__(
        self,
        *args: str,
        name: str | None = None,
        stdin: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Result:
        extra = dict(env or {})
        if name is not None:
            extra["AGENT_ROOM_NAME"] = name
        data = stdin.encode() if isinstance(stdin, str) else stdin
        proc = subprocess.run(
            [sys.executable, "-m", "agent_room", *args],
            input=data if data is not None else b"",
            capture_output=True,
            env=self.env(extra),
            timeout=60,
            check=False,
        )
        return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    @contextlib.contextmanager
    def watching(
        self, env: Mapping[str, str] | None = None, *, stderr: int | IO[bytes] = subprocess.DEVNULL
    ) -> Iterator[subprocess.Popen[bytes]]:
        """``agent-room watch`` running on the room, as the user starts it (the tests
        turn the background one off); stopped with SIGTERM at the end, killed if it
        outlives that (a test may also stop it itself)."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_room", "watch"],
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def cli(room_home: Path) -> Cli:
    """Run the command line against the test's room."""
    return Cli(room_home)


def _builds_without_isolation() -> bool:
    """Whether this interpreter's setuptools can build a wheel by itself."""
    import importlib.metadata
    import importlib.util

    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return False
    major, minor = (int(part) for part in version.split(".")[:2])
    # bdist_wheel moved into setuptools in 70.1; before that it needs the wheel package
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def copy_source(src: Path) -> Path:
    """What a build of the package reads, copied from the checkout into ``src``."""
    import shutil

    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    for name in ("agent_room", "plugin", "themes"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    return src


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package built as a wheel, once per test process, from a copy of the checkout
    (an in-tree build would leave build/ and stale files behind)."""

    tmp = tmp_path_factory.mktemp("wheel")
    src = copy_source(tmp / "src")
    isolation = ["--no-build-isolation"] if _builds_without_isolation() else []
    dist = str(tmp / "dist")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", dist, str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (built,) = (tmp / "dist").glob("agent_room-*.whl")
    return built
