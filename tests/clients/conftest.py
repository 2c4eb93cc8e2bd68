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
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import libtmux
import pytest

from agent_room.demo.client_api import StandIn
from tests.conftest import REPO, require_tool
from tests.live import TURN as TURN  # noqa: PLC0414  (re-exported for the tier's tests)
from tests.live import LiveRoom, mark_real
from tests.poll import poll

STARTUP = 60.0
"""Seconds a client may take to reach its prompt (several on this 2-core machine)."""
READY = {"codex": "Ask Codex to do anything", "gemini": "Type your message"}
"""What each client's input line shows when it waits for a prompt."""
ENTERS = 3
"""Enters at most for one typed prompt."""
TYPINGS = 2
"""Times a prompt is typed at most, when a client dropped the keys."""
INPUT_LINES = 10
"""The pane's last lines, where a client's input (wrapped) and its footer are."""
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
    mark_real(__file__, items)


LATEST = {
    "codex": REPO / ".tools" / "codex-latest" / "node_modules" / ".bin" / "codex",
    "gemini": REPO / ".tools" / "gemini-cli-latest" / "node_modules" / ".bin" / "gemini",
}
"""The newest releases on npm, installed beside the pinned ones by ``.ci/setup``."""


@pytest.fixture(params=["pinned", "latest"])
def release(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each client runs pinned and in its newest release on npm (which a new user
    installs); a missing newest release fails under CI=true."""
    value: str = request.param
    if value == "latest":
        for kind, binary in LATEST.items():
            require_tool(binary.is_file() and os.access(binary, os.X_OK), f"{kind} at {binary}")
            monkeypatch.setenv(BINARIES[kind][0], str(binary))
    return value


@pytest.fixture(params=["codex", "gemini"])
def kind(request: pytest.FixtureRequest, release: str) -> str:
    """Each test runs with both clients, each pinned and newest."""
    del release  # (chooses the binaries first)
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


class ClientRoom(LiveRoom[StandIn]):
    """The room of one test, with real Codex or Gemini agents started by ``agent-room start``."""

    def __init__(self, root: Path, api: StandIn, server: libtmux.Server, room_home: Path):
        super().__init__(root, api, server, room_home)
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

    def start(
        self, name: str, kind: str, *, repo: Path | None = None, args: tuple[str, ...] = ()
    ) -> None:
        """Start the client as @name with ``agent-room start``; wait for its prompt. With
        ``repo``, in a worktree of its own (``--worktree``); ``args`` go to the client."""
        where = ["--cwd", str(repo), "--worktree"] if repo is not None else []
        if repo is None:
            work = self.root / name
            work.mkdir()
            where = ["--cwd", str(work)]
        tail = ["--", *args] if args else []
        result = self.run("start", name, "--agent", kind, *where, "--detach", *tail)
        assert result.code == 0, result.err
        self.wait(lambda: READY[kind] in self.screen(name), STARTUP, name)

    def type(self, name: str, line: str, target: str | None = None) -> None:
        """Type a prompt as the user would, then Enter; see the client's hook take it (a
        client still loading a session, or drawing the end of a turn, can drop an Enter:
        it is pressed again; or the keys typed: once its input shows none of the line, it
        is typed again)."""
        target = target or f"=ac-{name}:"
        for _ in range(TYPINGS):
            self.server.cmd("send-keys", "-t", target, "-l", "--", line)
            time.sleep(KEY_SETTLE)
            for _ in range(ENTERS):
                self.server.cmd("send-keys", "-t", target, "Enter")
                if poll(lambda: self.prompted(name, line), timeout=TURN / ENTERS):
                    return
                if not self._shows(target, line):
                    break  # the keys were dropped, not the Enter
        raise AssertionError(f"@{name} did not take {line!r}:\n{self.screen(target)}")

    def _shows(self, target: str, line: str) -> bool:
        """Whether the bottom of the pane (the input and what was just submitted) shows
        the start or the end of ``line`` (a wrapped line keeps both whole)."""
        bottom = "".join(self.screen(target).splitlines()[-INPUT_LINES:])
        return line[:20] in bottom or line[-12:] in bottom

    def prompted(self, name: str, line: str) -> bool:
        """Whether @name's hook has seen the prompt ``line``."""
        return any((t["prompt"] or "").strip() == line for t in self.turns(name))

    def message(self, message_id: int) -> dict[str, Any]:
        """One message of the room's history, as ``history --json`` shows it."""
        found = [m for m in self.rows("history", "100") if m["id"] == message_id]
        assert found, f"no message #{message_id}"
        return dict(found[0])

    def send(self, sender: str, recipient: str, body: str) -> int:
        """``agent-room send`` as @sender; the new message's id."""
        result = self.run("send", f"@{recipient}", body, name=sender)
        assert result.code == 0, result.err
        return int(result.out.strip())


@pytest.fixture
def clients(
    tmp_path: Path, standin: StandIn, server: libtmux.Server, room_home: Path
) -> Iterator[ClientRoom]:
    """A room for real Codex and Gemini agents, with the delivery worker running."""
    opened = ClientRoom(tmp_path, standin, server, room_home)
    opened.watch()
    yield opened
    opened.close()
    _end_panes(server)


def _end_panes(server: libtmux.Server) -> None:
    """End every client the test started, with what it started: Gemini CLI outlives the
    hang-up a closing tmux server sends, and would keep running after the test."""
    import contextlib

    import psutil

    for pane in server.panes:
        with contextlib.suppress(psutil.Error, ValueError, TypeError):
            root = psutil.Process(int(pane.pane_pid or ""))
            for proc in [*root.children(recursive=True), root]:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
