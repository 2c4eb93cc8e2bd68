"""The other clients' tier: Codex CLI and Gemini CLI (pinned, from npm) in tmux panes.

Each test gets an isolated HOME whose only configuration is what a user of the stand-in
would have (Codex: a model provider pointing at it; Gemini: API-key auth), the stand-in
for both APIs on a free loopback port, a private tmux server and its own room. Everything
else (hooks, trust, permission to run ``agent-room``) is what ``agent-room start`` gives.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import libtmux
import pytest

from agent_room.demo.client_api import StandIn
from agent_room.room import Room
from tests.conftest import REPO, Cli, Result, require_tool
from tests.tmux.conftest import wait_for

STARTUP = 60.0
"""Seconds a client may take to reach its prompt (several on this 2-core machine)."""
TURN = 60.0
READY = {"codex": "Ask Codex to do anything", "gemini": "Type your message"}
"""What each client's input line shows when it waits for a prompt."""
ENTERS = 3
"""Enters at most for one typed prompt."""
KEY_SETTLE = 0.3
"""Seconds between a test's typed prompt and its Enter (the room's own are per client)."""
BINARIES = {
    "codex": ("AGENT_ROOM_CODEX", REPO / ".tools" / "codex" / "node_modules" / ".bin" / "codex"),
    "gemini": (
        "AGENT_ROOM_GEMINI",
        REPO / ".tools" / "gemini-cli" / "node_modules" / ".bin" / "gemini",
    ),
}


def client_binary(kind: str) -> Path:
    """The pinned client: $AGENT_ROOM_CODEX / $AGENT_ROOM_GEMINI (set by .ci/test), else
    the project's copy installed by .ci/setup."""
    variable, default = BINARIES[kind]
    given = os.environ.get(variable)
    return Path(given) if given else default


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder is in the ``real`` tier (select it with ``-m real``)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.real)


@pytest.fixture(params=["codex", "gemini"])
def kind(request: pytest.FixtureRequest) -> str:
    """Each test runs with both clients."""
    value: str = request.param
    require_tool(shutil.which("tmux") is not None, "tmux")
    binary = client_binary(value)
    require_tool(binary.is_file() and os.access(binary, os.X_OK), f"{value} at {binary}")
    return value


@pytest.fixture
def standin() -> Iterator[StandIn]:
    """The stand-in for both APIs, recording every request."""
    with StandIn() as api:
        yield api


class ClientRoom:
    """The room of one test, with real Codex or Gemini agents started by ``agent-room start``."""

    def __init__(self, root: Path, api: StandIn, server: libtmux.Server, room_home: Path):
        self.root = root
        self.api = api
        self.server = server
        base = os.environ.get("TMUX_TMPDIR", "/tmp")
        self.socket = f"{base}/tmux-{os.getuid()}/{server.socket_name}"
        self.home = root / "home"
        self.room_home = room_home
        self._write_user_config()
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE", "TMUX", "AGENT_ROOM_", "GEMINI_", "CODEX_"))
        }
        self.env = {
            **inherited,
            "HOME": str(self.home),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "STANDIN_API_KEY": "stand-in-key",
            "GEMINI_API_KEY": "stand-in-key",
            "GOOGLE_GEMINI_BASE_URL": api.url,
            "AGENT_ROOM_HOME": str(room_home),
            "AGENT_ROOM_TMUX": self.socket,
            "AGENT_ROOM_CODEX": str(client_binary("codex")),
            "AGENT_ROOM_GEMINI": str(client_binary("gemini")),
            "AGENT_ROOM_WATCH": "off",  # the test runs the watch it wants
        }
        self.cli = Cli(room_home)
        self._watch: subprocess.Popen[bytes] | None = None

    def _write_user_config(self) -> None:
        """What a user of the stand-in has configured: a provider, an auth method."""
        codex = self.home / ".codex"
        codex.mkdir(parents=True)
        (codex / "config.toml").write_text(
            'model = "stand-in-model"\nmodel_provider = "standin"\n\n'
            "[model_providers.standin]\n"
            f'name = "Stand-in"\nbase_url = "{self.api.url}/v1"\n'
            'env_key = "STANDIN_API_KEY"\nwire_api = "responses"\n'
        )
        gemini = self.home / ".gemini"
        gemini.mkdir()
        auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (gemini / "settings.json").write_text(json.dumps(auth))

    def run(self, *args: str, name: str | None = None) -> Result:
        """``agent-room ARGS`` in this room's environment."""
        env = dict(self.env)
        if name:
            env["AGENT_ROOM_NAME"] = name
        return self.cli(*args, env=env)

    def start(self, name: str, kind: str) -> None:
        """Start the client as @name with ``agent-room start``; wait for its prompt."""
        work = self.root / name
        work.mkdir()
        result = self.run("start", name, "--agent", kind, "--cwd", str(work), "--detach")
        assert result.code == 0, result.err
        self.wait(lambda: READY[kind] in self.screen(name), STARTUP, name)

    def wait(self, check: Callable[[], object], timeout: float = TURN, *names: str) -> object:
        """``wait_for``, and on a timeout the room and the panes of ``names`` in the error."""
        try:
            return wait_for(check, timeout=timeout)
        except AssertionError as exc:
            screens = "\n".join(f"--- pane of @{n}:\n{self.screen(n)}" for n in names)
            raise AssertionError(f"{exc}\n--- who: {self.who()}\n{screens}") from None

    def screen(self, name: str) -> str:
        """What the pane of @name (or the tmux target ``=SESSION:``) shows now."""
        target = name if name.startswith("=") else f"=ac-{name}:"
        out = self.server.cmd("capture-pane", "-p", "-t", target)
        return "\n".join(out.stdout)

    def keys(self, name: str, *keys: str) -> None:
        """Press keys (tmux key names) in the pane of @name."""
        self.server.cmd("send-keys", "-t", f"=ac-{name}:", *keys)

    def type(self, name: str, line: str, target: str | None = None) -> None:
        """Type a prompt as the user would, then Enter; see the client's hook take it (a
        client still loading a session can drop an Enter: it is pressed again)."""
        target = target or f"=ac-{name}:"
        self.server.cmd("send-keys", "-t", target, "-l", "--", line)
        time.sleep(KEY_SETTLE)
        for _ in range(ENTERS):
            self.server.cmd("send-keys", "-t", target, "Enter")
            try:
                wait_for(lambda: self.prompted(name, line), timeout=TURN / ENTERS)
            except AssertionError:
                continue
            return
        raise AssertionError(f"@{name} did not take {line!r}:\n{self.screen(target)}")

    def turns(self, name: str) -> list[dict[str, Any]]:
        """The turns the room recorded for @name."""
        room = self.open()
        try:
            row = room.store.holder(name)
            return room.store.turns(str(row["session_id"]), limit=50) if row else []
        finally:
            room.close()

    def prompted(self, name: str, line: str) -> bool:
        """Whether @name's hook has seen the prompt ``line``."""
        return any((t["prompt"] or "").strip() == line for t in self.turns(name))

    def who(self) -> dict[str, dict[str, Any]]:
        """``agent-room who --json`` by name."""
        result = self.run("who", "--json")
        assert result.code == 0, result.err
        return {row["name"]: row for row in json.loads(result.out)}

    def member(self, name: str) -> dict[str, Any]:
        """One row of ``who``, or an empty one."""
        return self.who().get(name, {})

    def message(self, message_id: int) -> dict[str, Any]:
        """One message of the room's history, as ``history --json`` shows it."""
        result = self.run("history", "100", "--json")
        assert result.code == 0, result.err
        found = [m for m in json.loads(result.out) if m["id"] == message_id]
        assert found, f"no message #{message_id}"
        return dict(found[0])

    def send(self, sender: str, recipient: str, body: str) -> int:
        """``agent-room send`` as @sender; the new message's id."""
        result = self.run("send", f"@{recipient}", body, name=sender)
        assert result.code == 0, result.err
        return int(result.out.strip())

    def open(self) -> Room:
        """The room service, read directly from the store."""
        return Room.open({"AGENT_ROOM_HOME": str(self.room_home)})

    def watch(self) -> None:
        """Run the delivery worker (``agent-room watch``) in the background."""
        self._watch = subprocess.Popen(
            [sys.executable, "-m", "agent_room", "watch"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def close(self) -> None:
        """Stop the worker; keep the stand-in's request log beside the test's files."""
        with (self.root / "model-requests.jsonl").open("w") as log:
            for request in list(self.api.requests):
                log.write(json.dumps(request._asdict()) + "\n")
        if self._watch is not None:
            self._watch.send_signal(signal.SIGTERM)
            try:
                self._watch.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._watch.kill()
                self._watch.wait()


@pytest.fixture
def clients(
    tmp_path: Path, standin: StandIn, server: libtmux.Server, room_home: Path
) -> Iterator[ClientRoom]:
    """A room for real Codex and Gemini agents, with the delivery worker running."""
    opened = ClientRoom(tmp_path, standin, server, room_home)
    opened.watch()
    yield opened
    opened.close()
