"""``agent-room serve`` as the operator starts it, and Debian's Chromium to drive it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agent_room.room.service import Room
from tests.conftest import REPO, require_tool
from tests.poll import wait_for

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""What Chromium needs here: no sandbox as root, and no connection of its own outside."""


_ESCAPES = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[^\[]")


class Screen:
    """What the console drew in a page, from the frames its WebSocket received."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.frames: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._take))

    def _take(self, data: str | bytes) -> None:
        self.frames.append(data.decode("utf-8", "replace") if isinstance(data, bytes) else data)

    def text(self) -> str:
        return _ESCAPES.sub("", "".join(self.frames))

    def shows(self, *texts: str, timeout: float = 60.0) -> None:
        """Wait for the console to draw ``texts``, letting Playwright deliver its events
        (the sync API hands frames over only inside its own calls)."""
        deadline = time.monotonic() + timeout
        while not all(t in self.text() for t in texts):
            if time.monotonic() > deadline:
                missing = [t for t in texts if t not in self.text()]
                raise AssertionError(f"the page never showed {missing}: {self.text()[-2000:]!r}")
            self.page.wait_for_timeout(100)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def status(url: str, headers: dict[str, str] | None = None) -> int:
    """The HTTP status of a GET (redirects not followed), 0 if nothing answered."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def require_chromium() -> None:
    require_tool(Path(CHROMIUM).exists() and shutil.which("chromium") is not None, "chromium")


@dataclass
class Served:
    """One ``agent-room serve`` process and what it printed."""

    proc: subprocess.Popen[bytes]
    base: str
    out: Path
    err: Path
    consoles_seen: set[int] = field(default_factory=set)

    def link(self) -> str:
        """The one-time link serve printed on standard output."""
        wait_for(lambda: "token=" in self.out.read_text(), timeout=30)
        return next(line for line in self.out.read_text().splitlines() if "token=" in line)

    def consoles(self) -> list[int]:
        """The console processes serve runs now (its children), remembered as seen."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if int(fields[1]) == self.proc.pid and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
        self.consoles_seen.update(found)
        return found

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> float:
        """Signal serve; how long it took to exit (it is killed past ``timeout``)."""
        started = time.monotonic()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        return time.monotonic() - started


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.fixture
def handover(room: Room) -> int:
    """Two agents and a handover waiting for the operator, before the console starts: the
    first picture holds them whole (later ones carry only the cells that changed)."""
    room.join("api")
    room.join("web")
    return room.send_handover("api", "web", body="Build the list view")


@pytest.fixture
def serve(room_home: Path, tmp_path: Path, handover: int) -> Iterator[Callable[..., Served]]:
    """Start ``agent-room serve`` on a free loopback port: ``serve(*args, env=...)``."""
    del handover
    config = tmp_path / "config" / "agent-room"
    config.mkdir(parents=True)
    (config / "console.toml").write_text("[notify]\nenabled = false\n")
    started: list[Served] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Served:
        port = free_port()
        environ = {
            **os.environ,
            "AGENT_ROOM_HOME": str(room_home),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "PYTHONPATH": str(REPO),
            **(env or {}),
        }
        for name in ("TMUX", "TMUX_PANE", "AGENT_ROOM_NAME", "AGENT_ROOM_SERVE_TOKEN"):
            if name not in (env or {}):
                environ.pop(name, None)
        out, err = tmp_path / f"serve-{port}.out", tmp_path / f"serve-{port}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-m", "agent_room", "serve", "--port", str(port), *args],
                env=environ,
                stdout=stdout,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
            )
        served = Served(proc, f"http://127.0.0.1:{port}/", out, err)
        started.append(served)
        wait_for(lambda: status(served.base) or proc.poll() is not None, timeout=30)
        assert proc.poll() is None, err.read_text()
        return served

    yield start
    for served in started:
        if served.proc.poll() is None:
            served.stop()
        for pid in served.consoles_seen:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
