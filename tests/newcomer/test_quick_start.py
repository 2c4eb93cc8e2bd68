"""The newcomer's path: the README's quick start, command by command, as the README prints it.

The commands are read from the README (``tests.docs.quick_start``), not copied here, and
typed into the terminal of a user who has just installed agent-room: an interactive
shell on a pty, a fresh HOME with no room, a PATH with ``agent-room`` (as pipx puts it in
``~/.local/bin``) and Claude Code (as npm puts it), tmux's default server (private to the
test through tmux's own ``TMUX_TMPDIR``), and two repositories of theirs. Each ``start``
takes the terminal into the agent's session and the user detaches with ``C-b d``; the
console is quit with ``q``. No ``AGENT_ROOM_*`` variable is set and no watch is started:
the quick start must bring up its own deliverer. What the README says the user sees is
checked on the terminal's screen.

The user's Claude Code is one they have used before, with an API key: ``.claude.json``
says onboarding is done, the key approved and the two repositories trusted (a folder
not yet trusted asks first: the README says to answer it), and the environment holds
``ANTHROPIC_API_KEY`` as a user's shell would. The one thing a real user would not have
is ``ANTHROPIC_BASE_URL``: it points that key at the loopback model stand-in instead of
Anthropic's API (the variable an API gateway's users set), and
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` keeps the client off the network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from agent_room.demo.model_api import ModelApi, Reply, Script
from tests.conftest import require_tool
from tests.docs import quick_start
from tests.poll import poll, wait_for
from tests.real.conftest import API_KEY, STARTUP, TURN, claude_binary
from tests.real.model import Conversations

REPOS = {"api": "code/api", "web": "code/web"}
"""The user's repositories, as the quick start names them."""
PROMPT = "newcomer$ "
"""The prompt of the user's shell (a plain one, to tell where each command's output ends)."""
PROMPT_OF_CLAUDE = "\u276f"
"""Claude Code's input prompt: the agent is ready for the user."""


class Shell:
    """The newcomer's shell: what they installed, their HOME, their tmux."""

    def __init__(self, root: Path, api: ModelApi) -> None:
        self.api = api
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
        """One command run in the home folder without a terminal (the test's own looks)."""
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

    def open_terminal(self) -> None:
        """The user's terminal: an interactive bash on a pty (a pane of a tmux server of
        its own, outside which nothing knows of it: ``$TMUX`` unset inside)."""
        env = [f"{k}={v}" for k, v in self.env.items()]
        shell = ["bash", "--noprofile", "--norc", "-i"]
        opened = self.tmux(
            "new-session", "-d", "-s", "desk", "-x", "120", "-y", "35", "-c", str(self.home),
            "env", "-u", "TMUX", "-u", "TMUX_PANE", f"PS1={PROMPT}", *env, *shell,
            socket="terminal",
        )  # fmt: skip
        assert opened.returncode == 0, opened.stderr
        wait_for(lambda: self.screen().count(PROMPT) == 1)

    def screen(self) -> str:
        """Everything the terminal shows, its scrollback included."""
        return self.tmux(
            "capture-pane", "-p", "-J", "-S", "-", "-t", "desk:", socket="terminal"
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        flags = ["-l", "--"] if literal else []
        self.tmux("send-keys", "-t", "desk:", *flags, *keys, socket="terminal")

    def type(self, command: str) -> None:
        """Type a command line and Enter, as the user does."""
        self.keys(command, literal=True)
        self.keys("Enter")

    def prompts(self) -> int:
        return self.screen().count(PROMPT)

    def prompted(self, before: int) -> bool:
        """Whether the shell is back at its prompt after a command typed at ``before``."""
        return self.prompts() > before

    def in_agent(self, name: str) -> bool:
        """Whether the user's terminal shows @name's tmux session with its client ready
        (drawn on the terminal: a detach within moments of the attach can cost tmux the
        line printed just before it)."""
        clients = self.tmux("list-clients", "-F", "#{client_session}").stdout.split()
        shown = self.tmux("capture-pane", "-p", "-t", "desk:", socket="terminal").stdout
        return clients == [f"ac-{name}"] and PROMPT_OF_CLAUDE in shown

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
    script = Script()
    bash = 'agent-room send @web "GET /tasks is live (from the README)"'
    script.add("Tell @web", Reply("Telling @web.", bash=bash))
    with ModelApi(script) as api:
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
    shell.open_terminal()
    for command in commands:
        prompts = shell.prompts()
        shell.type(command)
        if command.startswith("agent-room start"):
            # the terminal goes into the agent's tmux session; the user detaches (C-b d)
            wait_for(partial(shell.in_agent, command.split()[2]), STARTUP)
            shell.keys("C-b")
            shell.keys("d")
        if command.startswith("agent-room who"):
            wait_for(partial(shell.prompted, prompts), 30)
            listed = [line.split() for line in _output(shell.screen(), command).splitlines()]
            if sorted(words[0] for words in listed[1:] if words) != ["api", "web"]:
                _ready(shell)  # the README: until their first hook ran, ask again
                prompts = shell.prompts()
                shell.type(command)
        if command == "agent-room":
            wait_for(lambda: "Sessions 2/2" in shell.screen(), 30)
            assert "@api" in shell.screen()
            assert "@web" in shell.screen()
            shell.keys("q")
        wait_for(partial(shell.prompted, prompts), 30)
        said = _output(shell.screen(), command)
        assert "Traceback" not in said
        assert "command not found" not in said
        if command.startswith("agent-room doctor"):
            assert "ok   tmux" in said
            assert "ok   Claude Code" in said
            assert not room.exists()  # a check makes nothing
        if command.startswith("agent-room start"):
            name = command.split()[2]
            assert f"@{name} started in tmux session ac-{name}" in said
            assert f"[detached (from session ac-{name})]" in said
        if command.startswith("agent-room start api"):
            assert "a deliverer runs in the background" in said
            assert (room.stat().st_mode & 0o777) == 0o700
        if command.startswith("agent-room who"):
            lines = said.splitlines()
            assert lines[0].split()[:3] == ["NAME", "STATE", "AGENT"], said
            rows = sorted(line.split()[:3] for line in lines[1:])  # as they registered
            assert rows == [["api", "idle", "claude"], ["web", "idle", "claude"]], said
    # "Go into an agent with tmux attach -t ac-api ... Ask @api to tell @web something:
    # it runs agent-room send @web ..., and the message reaches @web at its next prompt."
    prompts = shell.prompts()
    shell.type("tmux attach -t ac-api")
    wait_for(partial(shell.in_agent, "api"), STARTUP)
    _ask(shell, "Tell @web that GET /tasks is live")
    seen = Conversations(shell.api)
    wait_for(lambda: seen.turns_showing("web", "GET /tasks is live (from the README)"), TURN)
    shell.keys("C-b")
    shell.keys("d")
    wait_for(partial(shell.prompted, prompts), 30)
    assert shell.tmux("has-session", "-t", "=ac-web").returncode == 0  # the agents run on
    # nothing of agent-room's outside the room the quick start made
    assert not (shell.home / ".config" / "agent-room").exists()
    assert not (shell.home / ".local" / "share" / "agent-room").exists()


def _ask(shell: Shell, prompt: str) -> None:
    """Type a prompt to the agent the terminal shows, then Enter until its model has it
    (a client can drop an Enter while it draws)."""
    shell.keys(prompt, literal=True)
    seen = Conversations(shell.api)
    for _ in range(3):
        shell.keys("Enter")
        if poll(lambda: seen.turns_showing("api", prompt), 10):
            return
    raise AssertionError(f"@api did not take the prompt:\n{shell.problems()}")


def _ready(shell: Shell) -> None:
    """Both agents registered and idle (what asking ``who`` again would show)."""

    def ready() -> bool:
        states = {name: row.get("state") for name, row in shell.who().items()}
        return states == {"api": "idle", "web": "idle"}

    try:
        wait_for(ready, STARTUP)
    except AssertionError as exc:
        raise AssertionError(f"{shell.who()}\n{shell.problems()}") from exc


def _output(screen: str, command: str) -> str:
    """What the last run of ``command`` printed: the lines between it and the next prompt."""
    after = screen.rpartition(f"{PROMPT}{command}\n")[2]
    return after.partition(PROMPT)[0].strip("\n")
