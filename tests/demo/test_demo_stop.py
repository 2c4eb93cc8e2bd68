"""``demo --stop`` ends every agent of the demo, also one that outlives the hang-up its
closing tmux server sends (Gemini CLI does), so nothing of the demo keeps running."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from agent_room.adapters.tmux_control import ControlClient
from agent_room.demo import room as demo_room

pytestmark = pytest.mark.tmux


def _alive(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rpartition(")")[2].split()[0] != "Z"


def test_stop_ends_an_agent_that_ignores_the_hang_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_room, "STOP_GRACE", 1.0)
    demo = demo_room.Demo(tmp_path / "demo")
    demo.root.mkdir()
    stubborn = "trap '' HUP TERM; exec sleep 600"
    tmux = ["tmux", "-S", str(demo.socket), "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "sh", "-c", stubborn], check=True)
    listed = subprocess.run(
        [*tmux, "list-panes", "-a", "-F", "#{pane_pid}"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(listed.stdout.split()[0])
    try:
        time.sleep(0.2)  # the trap in place before the hang-up
        demo_room.stop(demo)
        assert not _alive(pid)
        assert not demo.root.exists()
    finally:
        if _alive(pid):
            os.kill(pid, 9)


def test_stop_ends_a_server_that_a_client_holds(tmp_path: Path) -> None:
    """tmux's server waits for its clients to leave before it exits. The deliverer's kept
    control client does not when the hang-up ends the deliverer just as the server tells
    the client to go (its reader gone, the exit unread): a stopped client stands in for
    it here, and ``stop`` ends it and the server."""
    demo = demo_room.Demo(tmp_path / "demo")
    demo.root.mkdir()
    tmux = ["tmux", "-S", str(demo.socket), "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-x", "80", "-y", "24", "sleep 600"], check=True)
    shown = [*tmux, "display-message", "-p", "#{pid} #{pane_id}"]
    server, pane = subprocess.run(shown, capture_output=True, text=True, check=True).stdout.split()
    kept = ControlClient(str(demo.socket))
    assert kept.run(pane, "display-message", "-p", "-t", pane, "#{pane_id}") == (True, [pane])
    clients = [*tmux, "list-clients", "-F", "#{client_pid}"]
    listed = subprocess.run(clients, capture_output=True, text=True, check=True)
    (client,) = map(int, listed.stdout.split())
    held = [int(server), client]
    os.kill(client, signal.SIGSTOP)
    try:
        demo_room.stop(demo)
        assert [pid for pid in held if _alive(pid)] == []
        assert not demo.root.exists()
    finally:
        for pid in held:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
