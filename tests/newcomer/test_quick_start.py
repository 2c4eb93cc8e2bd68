"""The newcomer's path: the README's quick start, command by command, as the README prints it.

The commands are read from the README (``tests.docs.quick_start``), not copied here, and
run in a shell of a user who has just installed agent-room: a fresh HOME with no room, a
PATH with ``agent-room`` (as pipx puts it in ``~/.local/bin``) and Claude Code (as npm
puts it), tmux's own default server (private to the test through tmux's ``TMUX_TMPDIR``,
so ``tmux attach -t ac-api`` works as the README says), and two repositories of theirs.
No ``AGENT_ROOM_*`` variable is set and no watch is started: the quick start must bring
up its own deliverer.

The user's Claude Code is one they have used before, with an API key: ``.claude.json``
says onboarding is done, the key approved and the two repositories trusted, and the
environment holds ``ANTHROPIC_API_KEY`` as a user's shell would. The one thing a real user
would not have is ``ANTHROPIC_BASE_URL``: it points that key at the loopback model
stand-in instead of Anthropic's API (the same variable an API gateway's users set), and
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` keeps the client off the network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.demo.model_api import ModelApi, Script
from tests.conftest import require_tool
from tests.docs import quick_start
from tests.real.conftest import API_KEY, STARTUP, claude_binary
from tests.tmux.conftest import wait_for

REPOS = {"api": "code/api", "web": "code/web"}
"""The user's repositories, as the quick start names them."""


class Shell:
    """The newcomer's shell: what they installed, their HOME, their tmux."""

    def __init__(self, root: Path, api: ModelApi) -> None:
        self.home = root / "home"
        self.bin = self.home / ".local" / "bin"
        self.bin.mkdir(parents=True)
        venv_bin = Path(shutil.which("agent-room") or "agent-room").parent
        (self.bin / "agent-room").symlink_to(venv_bin / "agent-room")
        npm_bin = root / "npm-global" / "bin"
        npm_bin.mkdir(parents=True)
        (npm_bin / "claude").symlink_to(claude_binary())
        node = shutil.which("node")
        assert node is not None
        self.tmux_dir = root / "tmux"
        self.tmux_dir.mkdir()
        self.env = {
            "HOME": str(self.home),
            "PATH": os.pathsep.join([str(self.bin), str(npm_bin), str(Path(node).parent)])
            + ":/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "SHELL": "/bin/bash",
            "TMUX_TMPDIR": str(self.tmux_dir),
            "ANTHROPIC_API_KEY": API_KEY,
            "ANTHROPIC_BASE_URL": api.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        for repo in REPOS.values():
            (self.home / repo).mkdir(parents=True)
        config = {
            "hasCompletedOnboarding": True,
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            "projects": {
                str(self.home / r): {"hasTrustDialogAccepted": True} for r in REPOS.values()
            },
            "fullscreenUpsellSeenCount": 99,
            "hasSeenAutoDefaultNotice": True,
        }
        (self.home / ".claude.json").write_text(json.dumps(config))

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        """One line typed at the prompt, in the home folder."""
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", command],
            cwd=self.home,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def tmux(self, *args: str, socket: str = "default") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", socket, *args], env=self.env, capture_output=True, text=True, check=False
        )

    def problems(self) -> str:
        """The agents' panes and the room's logs, for a failure's message."""
        panes = [self.tmux("capture-pane", "-p", "-t", f"=ac-{n}:").stdout for n in REPOS]
        logs = [p.read_text() for p in (self.home / ".agent-room").glob("*.log")]
        return "\n---\n".join([*panes, *logs])

    def who(self) -> dict[str, dict[str, object]]:
        out = self.run("agent-room who --json").stdout or "[]"
        return {row["name"]: row for row in json.loads(out)}


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    require_tool(shutil.which("tmux") is not None, "tmux")
    require_tool(claude_binary().is_file(), f"Claude Code at {claude_binary()}")
    with ModelApi(Script()) as api:
        opened = Shell(tmp_path, api)
        try:
            yield opened
        finally:
            opened.run("agent-room watch --stop")
            opened.tmux("kill-server")
            opened.tmux("kill-server", socket="terminal")


def test_the_quick_start_as_printed(shell: Shell) -> None:
    commands = quick_start()
    assert commands[-1] == "agent-room", "the quick start ends by opening the console"
    room = shell.home / ".agent-room"
    for command in commands[:-1]:
        done = shell.run(command)
        said = done.stdout + done.stderr
        assert done.returncode == 0, f"{command}: {said}"
        assert "Traceback" not in said
        if command.startswith("agent-room doctor"):
            assert "ok   tmux" in said
            assert "ok   Claude Code" in said
            assert not room.exists()  # a check makes nothing
        if command.startswith("agent-room start"):
            name = command.split()[2]
            assert f"@{name} started in tmux session ac-{name}" in said
            assert f"attach: tmux attach -t ac-{name}" in said
        if command.startswith("agent-room start api"):
            assert "a deliverer runs in the background" in said
            assert (room.stat().st_mode & 0o777) == 0o700
        if command.startswith("agent-room who"):

            def ready() -> bool:
                states = {name: row.get("state") for name, row in shell.who().items()}
                return states == {"api": "idle", "web": "idle"}

            try:
                wait_for(ready, STARTUP)
            except AssertionError as exc:
                raise AssertionError(f"{shell.who()}\n{shell.problems()}") from exc
            assert sorted(shell.who()) == ["api", "web"]
            table = shell.run(command).stdout
            assert table.splitlines()[0].split()[:3] == ["NAME", "STATE", "AGENT"]
            rows = sorted(line.split()[:3] for line in table.splitlines()[1:])  # as registered
            assert rows == [["api", "idle", "claude"], ["web", "idle", "claude"]]

    # "tmux attach -t ac-api" reaches the agent as the README says
    assert shell.tmux("has-session", "-t", "=ac-api").returncode == 0
    # the console, in a terminal of the user's (a tmux server of its own stands in for it)
    opened = shell.tmux(
        "new-session", "-d", "-s", "desk", "-x", "120", "-y", "35", "-c", str(shell.home),
        "env", "-u", "TMUX", f"PATH={shell.env['PATH']}", "bash", "--norc", "-c",
        f"{commands[-1]}; echo CONSOLE-CLOSED; sleep 600", socket="terminal",
    )  # fmt: skip
    assert opened.returncode == 0, opened.stderr

    def screen() -> str:
        return shell.tmux("capture-pane", "-p", "-t", "desk:", socket="terminal").stdout

    wait_for(lambda: "@api" in screen() and "@web" in screen(), timeout=30)
    shell.tmux("send-keys", "-t", "desk:", "q", socket="terminal")
    wait_for(lambda: "CONSOLE-CLOSED" in screen(), timeout=15)
    # nothing of agent-room's outside the room the quick start made
    assert not (shell.home / ".config" / "agent-room").exists()
    assert not (shell.home / ".local" / "share" / "agent-room").exists()
