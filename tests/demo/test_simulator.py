"""The simulated agent, started by ``agent-room start`` in real tmux, seen by the real room."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import libtmux
import pytest

from agent_room.demo.conversation import PROMPTS
from tests.conftest import Cli, require_tool
from tests.poll import wait_for


@pytest.fixture
def env(server: libtmux.Server) -> dict[str, str]:
    """What points ``agent-room start`` at the test's private tmux server."""
    require_tool(shutil.which("tmux") is not None, "tmux")
    base = os.environ.get("TMUX_TMPDIR", "/tmp")
    return {"AGENT_ROOM_TMUX": f"{base}/tmux-{os.getuid()}/{server.socket_name}"}


@pytest.fixture
def watch(cli: Cli, env: dict[str, str]) -> Iterator[None]:
    """The delivery worker (``agent-room watch``) running on the test's room."""
    with cli.watching(env):
        yield


def _who(cli: Cli) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in json.loads(cli("who", "--json").out)}


def _screen(server: libtmux.Server, name: str) -> str:
    return "\n".join(server.cmd("capture-pane", "-p", "-J", "-t", f"=ac-{name}:").stdout)


def test_a_dialog_holds_a_message_until_the_simulated_user_allows_it(
    cli: Cli, env: dict[str, str], server: libtmux.Server, watch: None
) -> None:
    simulator = [sys.executable, "-m", "agent_room.demo.simulator", "--answer-after", "8"]
    started = cli(
        "start", "mobile", "--detach", "--agent", "command", "--agent-kind", "simulated", "--",
        *simulator, env=env,
    )  # fmt: skip
    assert started.code == 0, started.err
    assert cli("join", "infra").code == 0
    wait_for(lambda: _who(cli).get("mobile", {}).get("state") == "idle")
    row = _who(cli)["mobile"]
    assert (row["agent"], row["pane"]) == ("simulated", "%0")
    server.cmd("send-keys", "-t", "=ac-mobile:", "-l", "--", PROMPTS["mobile"])
    server.cmd("send-keys", "-t", "=ac-mobile:", "Enter")

    wait_for(lambda: _who(cli)["mobile"]["state"] == "waiting")
    sent = cli("send", "@mobile", "staging is ready", name="infra")
    assert sent.code == 0, sent.err
    wait_for(lambda: _who(cli)["mobile"]["delivery"] == "a permission dialog is open")
    dialog = _screen(server, "mobile").partition("Do you want to proceed?")[2]
    assert "[agent-room]" not in dialog  # nothing was typed into the dialog

    # the simulated user allows it; the turn ends and its Stop hook hands the message over
    wait_for(lambda: "Stop hook feedback" in _screen(server, "mobile"), timeout=15)
    wait_for(lambda: _who(cli)["mobile"]["state"] == "idle")
    (message,) = json.loads(cli("history", "--json").out)
    assert (message["status"], message["body"]) == ("delivered", "staging is ready")
    assert "allowed by the simulated user" in _screen(server, "mobile")
