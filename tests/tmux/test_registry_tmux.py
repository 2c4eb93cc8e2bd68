"""A process in a real tmux pane registers itself through the hook, then dies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import libtmux

from tests.conftest import Cli
from tests.poll import wait_for
from tests.tmux.conftest import agent_command


def _who(cli: Cli) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in json.loads(cli("who", "--json").out)}


def test_pane_process_registers_and_ends(server: libtmux.Server, room_home: Path, cli: Cli) -> None:
    session = server.new_session(
        session_name="ac-backend", window_command=agent_command(room_home, "backend")
    )
    pane = session.active_window.active_pane
    assert pane is not None
    wait_for(lambda: "You are @backend" in "\n".join(pane.capture_pane()))
    who = _who(cli)["backend"]
    assert who["pane"] == pane.pane_id
    assert who["pid"] == int(str(pane.pane_pid))  # the agent itself, not the hook's shell
    assert who["state"] == "idle"

    pane.send_keys("hello", enter=True)
    wait_for(lambda: "PROMPT: hello" in "\n".join(pane.capture_pane()))
    wait_for(lambda: _who(cli)["backend"]["state"] == "idle")

    server.cmd("kill-pane", "-t", pane.pane_id or "")  # SIGHUP: no SessionEnd hook runs
    wait_for(lambda: _who(cli)["backend"]["state"] == "ended")
