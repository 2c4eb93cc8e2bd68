"""What the real tiers' rooms share (tests/real: Claude Code; tests/clients: Codex and
Gemini): a room driven through the ``agent-room`` command in the agents' environment, the
panes of a private tmux server, the delivery worker in the background, and the model
stand-in's request log kept beside the test's files for reading a failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import libtmux
import pytest

from agent_room.demo.client_api import StandIn
from agent_room.demo.model_api import ModelApi
from agent_room.room.access import serving_pid
from agent_room.room.service import Room
from tests.conftest import Cli, Result
from tests.poll import wait_for

TURN = 60.0
"""Seconds a scripted turn (hooks, tool calls, deliveries) may take."""

Api = TypeVar("Api", StandIn, ModelApi)


def mark_real(conftest: str, items: list[pytest.Item]) -> None:
    """Put every test of the folder of ``conftest`` in the ``real`` tier."""
    here = Path(conftest).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.real)


class LiveRoom(Generic[Api]):
    """The room of one test with real clients; a subclass sets ``env`` (the agents'
    environment) and starts the clients its own way."""

    env: dict[str, str]

    def __init__(self, root: Path, api: Api, server: libtmux.Server, room_home: Path):
        self.root = root
        self.api: Api = api
        self.server = server
        base = os.environ.get("TMUX_TMPDIR", "/tmp")
        self.socket = f"{base}/tmux-{os.getuid()}/{server.socket_name}"
        self.home = root / "home"
        self.room_home = room_home
        self.cli = Cli(room_home)
        self._watch: subprocess.Popen[bytes] | None = None

    def run(self, *args: str, name: str | None = None) -> Result:
        """``agent-room ARGS`` in this room's environment."""
        env = dict(self.env)
        if name:
            env["AGENT_ROOM_NAME"] = name
        return self.cli(*args, env=env)

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

    def rows(self, *args: str, name: str | None = None) -> list[dict[str, Any]]:
        """What ``agent-room ARGS --json`` prints, which must succeed."""
        result = self.run(*args, "--json", name=name)
        assert result.code == 0, result.err
        found: list[dict[str, Any]] = json.loads(result.out)
        return found

    def who(self) -> dict[str, dict[str, Any]]:
        """``agent-room who --json`` by name."""
        return {row["name"]: row for row in self.rows("who")}

    def member(self, name: str) -> dict[str, Any]:
        """One row of ``who``, or an empty one."""
        return self.who().get(name, {})

    def turns(self, name: str, limit: int = 50) -> list[dict[str, Any]]:
        """The turns the room recorded for @name, oldest first."""
        room = self.open()
        try:
            row = room.store.holder(name)
            return room.store.turns(str(row["session_id"]), limit=limit) if row else []
        finally:
            room.close()

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
        # as a watch the user started is up before the agents: it serves the room's tools,
        # which a client connects to once, when it starts
        wait_for(lambda: serving_pid(str(self.room_home)) is not None, timeout=30)

    def close(self) -> None:
        """Stop the worker and keep the stand-in's request log beside the test's files (for
        reading a failure); the tmux server goes with libtmux's fixture."""
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
