"""The README's "your own agents" walk-through, step by step, with the real client.

The wheel is installed into a fresh virtual environment outside the checkout, put on
the PATH as the README says, the plugin installed with Claude Code's own plugin manager
from ``agent-room plugin marketplace``; two Claude Code sessions started by hand in tmux
(only ``AGENT_ROOM_NAME`` set) appear in ``who`` under their names; with ``agent-room
watch`` running, a handover the operator approves reaches the other model; then
everything is uninstalled again.
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
from tests.poll import wait_for
from tests.real.conftest import API_KEY, PROMPT, STARTUP, TURN, claude_binary
from tests.real.model import Conversations

NAMES = ("api", "web")
TODO = "Build the task list view (todo-5c1e)"


class Walk:
    """A user's shell: HOME, a PATH with the installed agent-room, no checkout in sight."""

    def __init__(self, root: Path, api: ModelApi) -> None:
        self.root = root
        self.api = api
        self.venv = root / "venv"
        self.home = root / "home"
        self.home.mkdir()
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

    def start(self, *argv: str) -> subprocess.Popen[bytes]:
        """A command left running, as in a terminal of its own."""
        program = shutil.which(argv[0], path=self.env["PATH"])
        assert program is not None
        return subprocess.Popen(
            [program, *argv[1:]],
            cwd=self.home,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def state(self, name: str) -> object:
        return self.who().get(name, {}).get("state")

    def screen(self, name: str) -> str:
        return self.run("tmux", "-S", self.socket, "capture-pane", "-p", "-t", f"{name}:").stdout

    def problems(self) -> str:
        """The panes and the room's errors.log, for a failure's message."""
        log = self.root / "room" / "errors.log"
        panes = "\n".join(f"--- {name}:\n{self.screen(name)}" for name in NAMES)
        return f"{panes}\nwho: {self.who()}\nerrors.log: {log.read_text() if log.exists() else ''}"


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

    # Sessions of your own, named, in tmux panes: no --plugin-dir, no AGENT_ROOM_BIN
    config = {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(walk.root / n): {"hasTrustDialogAccepted": True} for n in NAMES},
        "fullscreenUpsellSeenCount": 99,
        "hasSeenAutoDefaultNotice": True,
    }
    settings = walk.home / ".claude.json"
    config.update(json.loads(settings.read_text()) if settings.exists() else {})
    settings.write_text(json.dumps(config))
    for name in NAMES:
        (walk.root / name).mkdir(exist_ok=True)
        walk.run(
            "tmux", "-S", walk.socket, "new-session", "-d", "-s", name, "-x", "160", "-y", "50",
            "-c", str(walk.root / name), "-e", f"AGENT_ROOM_NAME={name}", "--", claude,
        )  # fmt: skip
    try:
        for name in NAMES:
            wait_for(lambda n=name: PROMPT in walk.screen(n), timeout=STARTUP)  # type: ignore[misc]
            wait_for(lambda n=name: walk.state(n) == "idle", timeout=STARTUP)  # type: ignore[misc]
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{walk.problems()}") from None
    for name in NAMES:
        row = walk.who()[name]
        assert (row["agent"], row["cwd"]) == ("claude", str(walk.root / name))
        assert str(row["pane"]).startswith("%")

    # The deliverer in a terminal of its own, a handover, the operator's approval
    watch = walk.start("agent-room", "watch")
    try:
        fields = ("--changed", "Added GET /tasks", "--todo", TODO, "--contract", "Task = {id}")
        walk.env["AGENT_ROOM_NAME"] = "api"
        walk.run("agent-room", "send", "@web", "--handover", *fields)
        del walk.env["AGENT_ROOM_NAME"]
        (pending,) = json.loads(walk.run("agent-room", "handovers", "--json").stdout)
        assert pending["fields"]["what_to_do"] == TODO
        walk.run("agent-room", "approve", str(pending["message_id"]))
        try:
            wait_for(lambda: Conversations(walk.api).turns_showing("web", TODO), timeout=TURN)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{walk.problems()}") from None
    finally:
        watch.terminate()
        watch.wait(timeout=30)

    # Uninstall: the plugin, its marketplace, the package
    walk.run("tmux", "-S", walk.socket, "kill-server")
    walk.run(claude, "plugin", "uninstall", "agent-room@agent-room")
    walk.run(claude, "plugin", "marketplace", "remove", "agent-room")
    walk.run(str(walk.venv / "bin" / "pip"), "uninstall", "-y", "-q", "agent-room")
    assert walk.run("agent-room", "--version", check=False).returncode != 0
    listed = walk.run(claude, "plugin", "list").stdout
    assert "agent-room@agent-room" not in listed
