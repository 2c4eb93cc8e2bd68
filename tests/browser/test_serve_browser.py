"""The console served to a web browser (``agent-room serve``), driven in a real headless
Chromium (Debian's package) by Playwright: the sessions appear, a key press approves the
pending handover, and the room records it; a request without the token is refused."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.room import Room
from tests.conftest import REPO, require_tool
from tests.tmux.conftest import wait_for

pytestmark = pytest.mark.browser

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
TOKEN = "test-token-0123456789abcdef"
_ESCAPES = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[^\[]")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


@pytest.fixture
def handover(room: Room) -> int:
    """Two agents and a handover waiting for the operator, before the console starts: the
    first picture holds them whole (later ones carry only the cells that changed)."""
    room.join("api")
    room.join("web")
    return room.send_handover("api", "web", body="Build the list view")


@pytest.fixture
def served(room_home: Path, tmp_path: Path, handover: int) -> Iterator[str]:
    """``agent-room serve`` on a free loopback port, with a token; its base address."""
    del handover
    config = tmp_path / "config" / "agent-room"
    config.mkdir(parents=True)
    (config / "console.toml").write_text("[notify]\nenabled = false\n")
    port = _free_port()
    env = {
        **os.environ,
        "AGENT_ROOM_HOME": str(room_home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": str(REPO),
        "AGENT_ROOM_SERVE_TOKEN": TOKEN,
    }
    for name in ("TMUX", "TMUX_PANE", "AGENT_ROOM_NAME"):
        env.pop(name, None)
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_room", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        wait_for(lambda: _status(base) or proc.poll() is not None, timeout=30)
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert TOKEN not in (tmp_path / "serve.log").read_text().replace(f"?token={TOKEN}", "", 1)


def test_a_request_without_the_right_token_is_refused(served: str) -> None:
    assert _status(served) == 403
    assert _status(served + "?token=wrong-token-0123456789") == 403
    assert _status(served + f"?token={TOKEN}") == 200


def test_the_served_console_approves_a_handover_from_a_browser(
    served: str, room: Room, handover: int, tmp_path: Path
) -> None:
    require_tool(Path(CHROMIUM).exists() and shutil.which("chromium") is not None, "chromium")
    from playwright.sync_api import sync_playwright

    hid = handover
    frames: list[str] = []

    def screen() -> str:
        return _ESCAPES.sub("", "".join(frames))

    def shows(*texts: str, timeout: float = 60.0) -> None:
        """Wait for the console to draw ``texts``, letting Playwright deliver its events
        (the sync API hands frames over only inside its own calls)."""
        deadline = time.monotonic() + timeout
        while not all(t in screen() for t in texts):
            if time.monotonic() > deadline:
                missing = [t for t in texts if t not in screen()]
                raise AssertionError(f"the page never showed {missing}: {screen()[-2000:]!r}")
            page.wait_for_timeout(100)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.on(
                "websocket",
                lambda ws: ws.on(
                    "framereceived",
                    lambda data: frames.append(
                        data.decode("utf-8", "replace") if isinstance(data, bytes) else data
                    ),
                ),
            )
            asked: list[str] = []
            page.on("request", lambda request: asked.append(request.url))
            page.goto(served + f"?token={TOKEN}")
            shows("@api", "@web", "1 pending handover", "Build the list view")
            page.click(".textual-terminal")
            page.keyboard.press("a")
            shows(f"Handover #{hid} approved.")
            page.screenshot(path=str(tmp_path / "served.png"))
            outside = [u for u in asked if not u.startswith(served.replace("http", "ws", 1))]
            assert [u for u in outside if not u.startswith(served)] == []  # nothing from outside
        finally:
            browser.close()
    row = room.store.handover(hid)
    assert row is not None
    assert row["state"] == "approved"
    assert row["decided_by"] == "operator"
