"""The console opened as a user opens it (``agent-room``, no setting changed) in a room
where no deliverer runs: it starts the room's background deliverer and stands by beside
it, so delivery goes on after the console quits; with the room's ``watch`` setting off
it delivers itself, as before."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import libtmux

from agent_room.cli.background import background_pid
from agent_room.room.service import Room
from tests.conftest import REPO
from tests.poll import poll, wait_for
from tests.tmux.test_delivery_tmux import room, screen, start_agent

__all__ = ["room"]  # the fixture: a room with @backend in it


def open_console(
    server: libtmux.Server, room_home: Path, tmp_path: Path, **extra: str
) -> libtmux.Pane:
    """``agent-room`` in a pane of its own, with only what a user's shell has (the test's
    tmux server passes COLUMNS and the test's own settings on: they are unset)."""
    env = {
        "AGENT_ROOM_HOME": str(room_home),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "PYTHONPATH": str(REPO),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TERM": "xterm-256color",
        **extra,
    }
    unset = ["-u", "COLUMNS", "-u", "LINES", "-u", "AGENT_ROOM_WATCH"]
    command = " ".join(
        ["env", *unset, *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "agent_room"]
    )
    window = server.sessions[0].new_window(window_name="console", window_shell=command)
    window.set_option("remain-on-exit", "on")
    # wide: the status bar says each worker's state in words
    server.cmd("resize-window", "-t", str(window.window_id), "-x", "180", "-y", "40")
    pane = window.active_pane
    assert pane is not None
    wait_for(lambda: "Sessions 2/2" in screen(pane), timeout=30)
    return pane


def quit_(server: libtmux.Server, pane: libtmux.Pane) -> bool:
    """Whether the pane's program has ended (the pane stays: ``remain-on-exit``)."""
    shown = server.cmd("display-message", "-p", "-t", str(pane.pane_id), "#{pane_dead}")
    return shown.stdout == ["1"]


def delivered(room: Room, message_id: int) -> bool:
    found = room.store.message(message_id)
    return found is not None and found["status"] in ("delivered", "read")


def test_the_console_starts_the_background_deliverer_which_outlives_it(
    server: libtmux.Server, room_home: Path, room: Room, tmp_path: Path
) -> None:
    start_agent(server, room_home, "frontend")
    assert background_pid(str(room_home)) is None
    console = open_console(server, room_home, tmp_path)
    wait_for(lambda: background_pid(str(room_home)) is not None, timeout=15)
    standing_by(console)

    first = room.send("backend", "frontend", "the contract is ready")
    wait_for(lambda: delivered(room, first), timeout=30)

    console.send_keys("q", enter=False)
    wait_for(lambda: quit_(server, console), timeout=30)
    second = room.send("backend", "frontend", "and the schema too")
    wait_for(lambda: delivered(room, second), timeout=30)  # the console has quit


def standing_by(console: libtmux.Pane) -> None:
    """The console's deliverer stands by beside the background one (its status bar says
    so); the screen as it was if it does not."""
    if not poll(lambda: "deliverer standby" in screen(console), timeout=15):
        raise AssertionError(f"the console's deliverer does not stand by:\n{screen(console)}")


SLOW_START = """\
import sys, time
if sys.argv[1:3] == ["watch", "--background"]:
    time.sleep(5)  # longer than start and join wait: the machine is busy
"""


def test_a_background_deliverer_slow_to_start_still_holds_the_lease(
    server: libtmux.Server, room_home: Path, room: Room, tmp_path: Path
) -> None:
    """On a busy machine the background watch can take seconds to start: the console
    waits for it, and its own deliverer stands by beside it."""
    start_agent(server, room_home, "frontend")
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(SLOW_START)
    console = open_console(server, room_home, tmp_path, PYTHONPATH=f"{slow}:{REPO}")
    standing_by(console)
    assert background_pid(str(room_home)) is not None
    mid = room.send("backend", "frontend", "the contract is ready")
    wait_for(lambda: delivered(room, mid), timeout=30)


def test_with_the_watch_setting_off_the_console_delivers_itself(
    server: libtmux.Server, room_home: Path, room: Room, tmp_path: Path
) -> None:
    start_agent(server, room_home, "frontend")
    console = open_console(server, room_home, tmp_path, AGENT_ROOM_WATCH="off")
    wait_for(lambda: "deliverer active" in screen(console), timeout=15)
    mid = room.send("backend", "frontend", "the contract is ready")
    wait_for(lambda: delivered(room, mid), timeout=30)
    assert background_pid(str(room_home)) is None
