"""The demo's console, driven as a user would: read with capture-pane, approve with ``a``."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_room.demo.conversation import AGENTS
from tests.conftest import Cli, require_tool
from tests.poll import wait_for

SETTLE = 60.0
"""Seconds the demo may take to tell its story on a busy 2-core machine."""


@pytest.fixture(autouse=True)
def _need_tmux() -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")


def _tmux(env: dict[str, str], *args: str) -> list[str]:
    proc = subprocess.run(
        ["tmux", "-S", env["AGENT_ROOM_TMUX"], *args], capture_output=True, text=True, check=False
    )
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def _json(cli: Cli, env: dict[str, str], *args: str) -> Any:
    result = cli(*args, "--json", env=env)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_the_console_shows_the_room_and_approves_the_handover_with_a_key(
    cli: Cli, tmp_path: Path
) -> None:
    tmp_root = tmp_path / "t"
    tmp_root.mkdir()
    started = cli("demo", "--detach", env={"TMPDIR": str(tmp_root)})
    assert started.code == 0, started.err
    try:
        demo = dict(line.removeprefix("export ").split("=", 1) for line in started.out.splitlines())
        demo["TMPDIR"] = str(tmp_root)
        (pane,) = _tmux(demo, "list-panes", "-t", "=demo:console", "-F", "#{pane_id}")

        def console() -> str:
            # a detached session has no client to size it: give the console room to draw,
            # again if anything sized the window back meanwhile
            size = _tmux(demo, "display-message", "-p", "-t", pane, "#{pane_width}x#{pane_height}")
            if size != ["200x50"]:
                _tmux(demo, "resize-window", "-t", "=demo:console", "-x", "200", "-y", "50")
            return "\n".join(_tmux(demo, "capture-pane", "-p", "-t", pane))

        def wait(check: Callable[[], object]) -> object:
            try:
                return wait_for(check, timeout=SETTLE)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n--- console:\n{console()}") from None

        # the header counts the room's sessions whatever the window's size
        wait(lambda: f"{len(AGENTS)} live / {len(AGENTS)} sessions" in console())
        wait(lambda: _json(cli, demo, "handovers"))
        (handover,) = _json(cli, demo, "handovers")
        hid = handover["message_id"]
        entry = f"#{hid} @{handover['sender']} →"  # the queue's line (it wraps when narrow)
        wait(lambda: "Handovers 1 pending" in console() and entry in console())
        assert _json(cli, demo, "history", "50")
        held = next(m for m in _json(cli, demo, "history", "50") if m["id"] == hid)
        assert held["status"] != "delivered"  # held for the operator

        _tmux(demo, "send-keys", "-t", pane, "a")
        wait(lambda: not _json(cli, demo, "handovers"))
        wait(lambda: "Handovers 0 pending" in console())

        def status() -> str:
            row = next(m for m in _json(cli, demo, "history", "50") if m["id"] == hid)
            return str(row["status"])

        wait(lambda: status() in {"delivered", "read"})
        events = _json(cli, demo, "history", "50")
        assert next(m for m in events if m["id"] == hid)["recipient"] == "frontend"
        wait(lambda: "approved" in console())

        # q quits the console, not the demo: the window says what now; Enter reopens it
        _tmux(demo, "send-keys", "-t", pane, "q")
        wait(lambda: "The console is closed; the demo room goes on." in console())
        assert "Enter: open the console again" in console()
        assert "agent-room demo --stop" in console()
        _tmux(demo, "send-keys", "-t", pane, "Enter")
        wait(lambda: f"Sessions {len(AGENTS)}/{len(AGENTS)}" in console())
    finally:
        stopped = cli("demo", "--stop", "all", env={"TMPDIR": str(tmp_root)})
    assert stopped.code == 0, stopped.err
    assert list(tmp_root.iterdir()) == []
