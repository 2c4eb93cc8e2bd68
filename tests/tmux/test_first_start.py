"""``agent-room start`` as a newcomer's first command: a room that does not exist yet, a
tmux server that already runs, and the shell's environment that the agent needs."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import libtmux
import pytest

from tests.conftest import Cli
from tests.poll import wait_for
from tests.tmux.test_launcher import FAKE_CLAUDE, _sessions, _socket

SECRET = "sk-test-not-on-any-command-line-5e1f"


def _fake_claude(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "claude.json"
    fake = tmp_path / "fake-claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable, out=str(out)))
    fake.chmod(0o755)
    return fake, out


def test_start_makes_the_room_and_its_deliverer(
    server: libtmux.Server, cli: Cli, room_home: Path, tmp_path: Path
) -> None:
    """The first ``start`` of a room that does not exist: the agent, the room and a
    background deliverer (nothing else made the room before the deliverer's log)."""
    fake, out = _fake_claude(tmp_path)
    if not (room_home / "room.conf").exists():  # the PostgreSQL pass names its database
        assert not room_home.exists()
    env = {"AGENT_ROOM_TMUX": _socket(server), "AGENT_ROOM_CLAUDE": str(fake)}
    env["AGENT_ROOM_WATCH"] = ""  # what a user has: the suite turns it off everywhere
    try:
        result = cli("start", "backend", "--cwd", str(tmp_path), "--detach", env=env)
        assert result.code == 0, result.err
        assert "@backend started in tmux session ac-backend" in result.err
        assert "a deliverer runs in the background" in result.err
        assert (room_home.stat().st_mode & 0o777) == 0o700
        wait_for(out.exists)
        assert cli("watch", "--status").code == 0
    finally:
        cli("watch", "--stop")


def test_the_agent_gets_the_environment_of_the_shell_that_starts_it(
    server: libtmux.Server, cli: Cli, room_home: Path, tmp_path: Path
) -> None:
    """A tmux server that already runs keeps its own environment for new sessions: the
    key the user exported in the shell that runs ``start`` must reach the agent all the
    same, and never through a command line (tmux's own argv included)."""
    server.new_session("already-here")  # the user's tmux server runs before start
    server.cmd("set-environment", "-g", "OPENAI_API_KEY", "sk-stale-from-tmux")
    server.cmd("set-environment", "-g", "SET_IN_TMUX", "kept")
    fake, out = _fake_claude(tmp_path)
    real = shutil.which("tmux")
    assert real is not None
    calls = tmp_path / "tmux-argv.log"
    wrapper = tmp_path / "bin" / "tmux"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    env = {
        "AGENT_ROOM_TMUX": _socket(server),
        "AGENT_ROOM_CLAUDE": str(fake),
        "OPENAI_API_KEY": SECRET,
        "PATH": f"{wrapper.parent}:{os.environ['PATH']}",
    }
    result = cli("start", "backend", "--cwd", str(tmp_path), "--detach", env=env)
    assert result.code == 0, result.err
    wait_for(out.exists)
    record = json.loads(out.read_text())
    assert record["env"]["OPENAI_API_KEY"] == SECRET  # the shell's wins over tmux's
    assert record["env"]["SET_IN_TMUX"] == "kept"  # tmux set-environment still arrives
    assert record["env"]["AGENT_ROOM_NAME"] == "backend"
    assert record["env"]["TMUX_PANE"].startswith("%")  # tmux's own variables stay tmux's
    assert SECRET not in calls.read_text()
    assert list(room_home.glob("*.env")) == []  # read once and removed by the pane
    assert "ac-backend" in _sessions(server)


@pytest.mark.parametrize("trusted", [False, True])
def test_a_detached_start_says_when_claude_will_ask_for_trust(
    server: libtmux.Server, cli: Cli, tmp_path: Path, trusted: bool
) -> None:
    """Claude Code holds an agent at its trust question the first time in a folder (it
    registers once answered): a start that does not attach says where to answer."""
    fake, _out = _fake_claude(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "code" / "api"
    work.mkdir(parents=True)
    projects = {str(work.parent): {"hasTrustDialogAccepted": True}} if trusted else {}
    (home / ".claude.json").write_text(json.dumps({"projects": projects}))
    env = {"AGENT_ROOM_TMUX": _socket(server), "AGENT_ROOM_CLAUDE": str(fake), "HOME": str(home)}
    result = cli("start", "api", "--cwd", str(work), "--detach", env=env)
    assert result.code == 0, result.err
    asks = f"@api waits at Claude Code's question whether you trust {work}"
    assert (asks in result.err) is not trusted
    if not trusted:
        assert result.err.endswith(f"answer it: tmux -S {_socket(server)} attach -t ac-api\n")
