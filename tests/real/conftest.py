"""The real-client tier: Claude Code (pinned, from npm) in tmux against the model stand-in.

Each test gets an isolated HOME whose ``.claude.json`` skips onboarding and trusts the
agents' folders, the scripted model stand-in on a free local port, a private tmux server
(``$AGENT_ROOM_TMUX``; the first ``agent-room start`` creates it with this environment),
and its own room. No network: everything the client asks for is answered locally.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import libtmux
import pytest

from agent_room.demo.model_api import ModelApi, Script
from tests.conftest import REPO, require_tool
from tests.live import TURN as TURN  # noqa: PLC0414  (re-exported for the tier's tests)
from tests.live import LiveRoom, mark_real
from tests.poll import poll
from tests.real.model import Conversations

API_KEY = "sk-ant-api03-standin-0123456789abcdefghijklmnop"
STARTUP = 60.0
"""Seconds a client may take to reach its prompt (several on this 2-core machine)."""
ENTERS = 3
"""Enters at most for one typed prompt."""
PROMPT = "\u276f"
"""The input prompt of Claude Code 2.1.330 (a heavy right-pointing angle)."""


def claude_binary() -> Path:
    """The pinned client: $AGENT_ROOM_CLAUDE (set by .ci/test), else the project's copy."""
    given = os.environ.get("AGENT_ROOM_CLAUDE")
    return (
        Path(given)
        if given
        else REPO / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder is in the ``real`` tier (select it with ``-m real``)."""
    mark_real(__file__, items)


LATEST = REPO / ".tools" / "claude-code-latest" / "node_modules" / ".bin" / "claude"
"""The newest release on npm, installed beside the pinned one by ``.ci/setup``."""


@pytest.fixture(autouse=True, params=["pinned", "latest"])
def release(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with the pinned client and with the newest release on npm (which
    a new user installs); a missing newest release fails under CI=true."""
    value: str = request.param
    if value == "latest":
        require_tool(LATEST.is_file() and os.access(LATEST, os.X_OK), f"Claude Code at {LATEST}")
        monkeypatch.setenv("AGENT_ROOM_CLAUDE", str(LATEST))
    return value


@pytest.fixture(autouse=True)
def _need_tools(release: str) -> None:
    del release  # (chooses the binary first)
    require_tool(shutil.which("tmux") is not None, "tmux")
    binary = claude_binary()
    require_tool(binary.is_file() and os.access(binary, os.X_OK), f"Claude Code at {binary}")


@pytest.fixture
def script() -> Script:
    """The model's script: tests add rules to it."""
    return Script()


@pytest.fixture
def model_api(script: Script) -> Iterator[ModelApi]:
    """The model stand-in, serving ``script`` and recording every request."""
    with ModelApi(script) as api:
        yield api


class RealRoom(LiveRoom[ModelApi]):
    """The room of one test, with real clients started through ``agent-room start``."""

    def __init__(self, root: Path, api: ModelApi, server: libtmux.Server, room_home: Path):
        super().__init__(root, api, server, room_home)
        self.home.mkdir()
        self.seen = Conversations(api)
        venv_bin = str(Path(sys.executable).parent)
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE", "TMUX", "AGENT_ROOM_"))
        }
        self.env = {
            **inherited,
            "HOME": str(self.home),
            "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "AGENT_ROOM_HOME": str(room_home),
            "AGENT_ROOM_TMUX": self.socket,
            "AGENT_ROOM_CLAUDE": str(claude_binary()),
            "AGENT_ROOM_WATCH": "off",  # the test runs the watch it wants
        }
        self._trusted: dict[str, Any] = {}
        self.claude_json: dict[str, Any] = {}
        """More of the clients' ``.claude.json`` (set before ``start``)."""

    def _write_claude_json(self) -> None:
        config = {
            "hasCompletedOnboarding": True,
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            "projects": self._trusted,
            "fullscreenUpsellSeenCount": 99,
            "hasSeenAutoDefaultNotice": True,
            **self.claude_json,
        }
        (self.home / ".claude.json").write_text(json.dumps(config))

    def start(
        self,
        *names: str,
        args: Sequence[str] = (),
        plain: Sequence[str] = (),
        repo: Path | None = None,
    ) -> None:
        """Start Claude Code as each @name with ``agent-room start``; wait for the prompts.

        All at once: a running client rewrites ``.claude.json``, so the folders are
        trusted before the first one starts. ``plain`` names are started without the
        room (no plugin, no room environment) in tmux sessions ``ac-NAME`` all the same.
        With ``repo``, each @name works in its own worktree of it (``--worktree``).
        """
        assert not self._trusted, "start every agent of a test in one call"
        for name in [*names, *plain]:
            work = self.root / name if repo is None else repo / ".worktrees" / name
            if repo is None:
                work.mkdir()
            self._trusted[str(work)] = {"hasTrustDialogAccepted": True}
        self._write_claude_json()
        tail = ["--", *args] if args else []
        for name in names:
            where = ["--cwd", str(self.root / name)]
            if repo is not None:
                where = ["--cwd", str(repo), "--worktree"]
            result = self.run("start", name, *where, "--detach", *tail)
            assert result.code == 0, result.err
        for name in plain:
            outside = {k: v for k, v in self.env.items() if not k.startswith("AGENT_ROOM_")}
            self.server.cmd(
                "new-session", "-d", "-s", f"ac-{name}", "-c", str(self.root / name),
                *(f"-e{k}={v}" for k, v in outside.items()),
                "--", "env", *(f"-u{k}" for k in self.env if k.startswith("AGENT_ROOM_")),
                str(claude_binary()), "--name", name,
            )  # fmt: skip
        for name in names:
            self.wait(lambda n=name: self.member(n).get("state") == "idle", STARTUP, name)  # type: ignore[misc]
        for name in [*names, *plain]:
            self.wait(lambda n=name: PROMPT in self.screen(n), STARTUP, name)  # type: ignore[misc]

    def pane(self, name: str) -> libtmux.Pane:
        """The pane of session ac-NAME."""
        session = self.server.sessions.get(session_name=f"ac-{name}")
        assert session is not None
        pane = session.active_window.active_pane
        assert pane is not None
        return pane

    def type(self, name: str, line: str) -> None:
        """Type a prompt as the user would, then Enter; see its turn start (a prompt
        reaches the UserPromptSubmit hook; a client busy starting up can drop an Enter)."""
        self.server.cmd("send-keys", "-t", f"=ac-{name}:", "-l", "--", line)
        self.wait(lambda: line in self.screen(name), TURN, name)
        for _ in range(ENTERS):
            self.server.cmd("send-keys", "-t", f"=ac-{name}:", "Enter")
            if line.startswith("/"):  # a command of the client: no turn to see
                return
            if poll(lambda: self.prompted(name, line), timeout=5):
                return
        raise AssertionError(f"@{name} did not take the prompt {line!r}:\n{self.screen(name)}")

    def prompted(self, name: str, line: str) -> bool:
        """Whether @name's hook has seen the prompt ``line``."""
        return any((t["prompt"] or "").strip() == line for t in self.turns(name, limit=20))

    def sessions(self) -> list[str]:
        """The tmux sessions of the room's server."""
        result = self.server.cmd("list-sessions", "-F", "#{session_name}")
        return list(result.stdout) if not result.returncode else []


@pytest.fixture
def real(
    tmp_path: Path, model_api: ModelApi, server: libtmux.Server, room_home: Path
) -> Iterator[RealRoom]:
    """A room for real clients, with the delivery worker running."""
    opened = RealRoom(tmp_path, model_api, server, room_home)
    opened.watch()
    yield opened
    opened.close()
