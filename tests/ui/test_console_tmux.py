"""The real console in a real tmux pane (a private server per test), fed by real hooks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import libtmux
import pytest

from tests.conftest import REPO, require_tool
from tests.hooks.conftest import Hook, new_session
from tests.poll import wait_for

pytestmark = pytest.mark.tmux


def _screen(pane: libtmux.Pane) -> str:
    return "\n".join(pane.capture_pane())


def test_console_shows_a_session_registered_by_a_hook_on_its_file_watch(
    server: libtmux.Server, room_home: Path, tmp_path: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    """With the safety re-read an hour away, only the watch of the room can bring the
    new session in: waited for as a condition, not timed (bench_console times it)."""
    require_tool(shutil.which("tmux") is not None, "tmux")
    config = tmp_path / "config" / "agent-room"
    config.mkdir(parents=True)
    (config / "console.toml").write_text("safety_interval = 3600\n")
    env = {
        "AGENT_ROOM_HOME": str(room_home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": str(REPO),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
    }
    # the test's tmux server passes COLUMNS=80 on, which Textual believes over the pane
    unset = ["-u", "COLUMNS", "-u", "LINES"]
    command = " ".join(
        ["env", *unset, *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "agent_room"]
    )
    session = server.new_session(session_name="console", window_command=command, x=150, y=40)
    pane = session.active_window.active_pane
    assert pane is not None
    wait_for(lambda: "Sessions 0/0" in _screen(pane), timeout=30)
    wait_for(lambda: "watcher on" in _screen(pane), timeout=10)
    wait_for(lambda: "deliverer active" in _screen(pane), timeout=10)  # it holds the lease
    wait_for(lambda: "injector active" in _screen(pane), timeout=10)  # and the links

    hook = Hook(room_home, agent_proc.pid)
    code, _out, err = hook(
        "SessionStart", new_session("SessionStart"), env={"AGENT_ROOM_NAME": "hooked"}
    )
    assert code == 0, err
    wait_for(lambda: "@hooked" in _screen(pane), timeout=30, step=0.05)
    assert "Sessions 1/1" in _screen(pane)
