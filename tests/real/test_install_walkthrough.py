"""The README's "your own agents" walk-through, step by step, with the real client.

The wheel is installed into a fresh virtual environment outside the checkout, put on
the PATH as the README says, the plugin installed with Claude Code's own plugin manager
from ``agent-room plugin marketplace``; a Claude Code session started by hand in tmux
(only ``AGENT_ROOM_NAME`` set) appears in ``who`` under its name; then everything is
uninstalled again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.demo.model_api import ModelApi
from tests.real.conftest import API_KEY, PROMPT, STARTUP, claude_binary
from tests.tmux.conftest import wait_for


class Walk:
    """A user's shell: HOME, a PATH with the installed agent-room, no checkout in sight."""

    def __init__(self, root: Path, api: ModelApi) -> None:
        self.root = root
        self.venv = root / "venv"
        self.home = root / "home"
        self.home.mkdir()
        self.work = root / "api"
        self.work.mkdir()
        self.socket = str(root / "tmux.sock")
        node = shutil.which("node")
        assert node is not None
        system = "/usr/local/bin:/usr/bin:/bin"
        self.env = {
            "HOME": str(self.home),
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{Path(node).parent}{os.pathsep}{system}",
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "AGENT_ROOM_HOME": str(root / "room"),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "AGENT_ROOM_WATCH": "off",  # the walk-through says where the deliverer runs
        }
        for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "TMPDIR"):
            if key in os.environ:
                self.env[key] = os.environ[key]

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A command as the user types it, in their home folder (found on their PATH)."""
        program = shutil.which(argv[0], path=self.env["PATH"])
        if program is None:
            assert not check, f"{argv[0]}: command not found"
            return subprocess.CompletedProcess(argv, 127, "", f"{argv[0]}: command not found")
        proc = subprocess.run(
            [program, *argv[1:]],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if check:
            assert proc.returncode == 0, f"{argv}: {proc.stdout}{proc.stderr}"
        return proc

    def who(self) -> dict[str, dict[str, object]]:
        out = self.run("agent-room", "who", "--json").stdout
        return {row["name"]: row for row in json.loads(out)}

    def screen(self) -> str:
        return self.run("tmux", "-S", self.socket, "capture-pane", "-p", "-t", "api:").stdout


@pytest.fixture
def walk(tmp_path: Path, model_api: ModelApi) -> Iterator[Walk]:
    opened = Walk(tmp_path, model_api)
    yield opened
    subprocess.run(["tmux", "-S", opened.socket, "kill-server"], capture_output=True, check=False)


def test_the_readme_walk_through_with_the_real_client(walk: Walk, wheel: Path) -> None:
    # Install: a virtual environment of its own, on the PATH
    walk.run(sys.executable, "-m", "venv", str(walk.venv))
    walk.run(str(walk.venv / "bin" / "pip"), "install", "-q", str(wheel))
    assert walk.run("agent-room", "--version").stdout.startswith("agent-room ")
    installed = walk.run("agent-room", "plugin", "path").stdout.strip()
    assert installed.startswith(str(walk.venv))  # the wheel's own copy, not the checkout's

    # The plugin, for good: Claude Code's own plugin manager, from a local marketplace
    marketplace = walk.run("agent-room", "plugin", "marketplace").stdout.strip()
    claude = str(claude_binary())
    walk.run(claude, "plugin", "marketplace", "add", marketplace)
    walk.run(claude, "plugin", "install", "agent-room@agent-room")
    doctor = walk.run("agent-room", "doctor", check=False).stdout
    assert "ok   plugin: installed in Claude Code (agent-room@agent-room" in doctor
    assert f"ok   agent-room on PATH: {walk.venv / 'bin' / 'agent-room'}" in doctor

    # A session of your own, named, in a tmux pane: no --plugin-dir, no AGENT_ROOM_BIN
    config = {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(walk.work): {"hasTrustDialogAccepted": True}},
        "fullscreenUpsellSeenCount": 99,
        "hasSeenAutoDefaultNotice": True,
    }
    settings = walk.home / ".claude.json"
    config.update(json.loads(settings.read_text()) if settings.exists() else {})
    settings.write_text(json.dumps(config))
    walk.run(
        "tmux", "-S", walk.socket, "new-session", "-d", "-s", "api", "-x", "160", "-y", "50",
        "-c", str(walk.work), "-e", "AGENT_ROOM_NAME=api", "--", claude,
    )  # fmt: skip
    try:
        wait_for(lambda: PROMPT in walk.screen(), timeout=STARTUP)
        wait_for(lambda: walk.who().get("api", {}).get("state") == "idle", timeout=STARTUP)
    except AssertionError as exc:
        log = walk.root / "room" / "errors.log"
        errors = log.read_text() if log.exists() else ""
        raise AssertionError(f"{exc}\n{walk.screen()}\nerrors.log: {errors}") from None
    row = walk.who()["api"]
    assert (row["agent"], row["cwd"]) == ("claude", str(walk.work))
    assert str(row["pane"]).startswith("%")

    # Uninstall: the plugin, its marketplace, the package
    walk.run("tmux", "-S", walk.socket, "kill-server")
    walk.run(claude, "plugin", "uninstall", "agent-room@agent-room")
    walk.run(claude, "plugin", "marketplace", "remove", "agent-room")
    walk.run(str(walk.venv / "bin" / "pip"), "uninstall", "-y", "-q", "agent-room")
    assert walk.run("agent-room", "--version", check=False).returncode != 0
    listed = walk.run(claude, "plugin", "list").stdout
    assert "agent-room@agent-room" not in listed
