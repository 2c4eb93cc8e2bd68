"""The operator's reach in real tmux: the status line in ``status-right``, the console in a
popup (by command and by the installed key), and notifications by display-message.

An inner tmux server (its own socket, no config) has a client attached inside a pane of
the test's outer server, so the outer pane's capture shows everything that client shows:
its status line, its popups and its messages.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import libtmux
import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.adapters.reach import TmuxChannel
from agent_room.room.service import Room
from agent_room.workers.notifier import Notifier
from tests.conftest import REPO, Cli
from tests.poll import wait_for

pytestmark = pytest.mark.tmux


@dataclass
class Inner:
    """The inner server and the outer pane its client is attached in."""

    socket: str
    pane: libtmux.Pane
    env: dict[str, str]

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args],
            capture_output=True,
            text=True,
            env=self.env,
            timeout=10,
            check=False,
        )

    def screen(self) -> str:
        return "\n".join(self.pane.capture_pane())

    def status_line(self) -> str:
        lines = self.pane.capture_pane()
        return lines[-1] if lines else ""


@pytest.fixture
def inner(server: libtmux.Server, room_home: Path, tmp_path: Path) -> Iterator[Inner]:
    socket = str(tmp_path / "inner.sock")
    bin_dir = str(Path(sys.executable).parent)
    env = {
        "AGENT_ROOM_HOME": str(room_home),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": str(REPO),
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "SHELL": "/bin/sh",
    }
    subprocess.run(
        ["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "work",
         "-x", "120", "-y", "30", "/bin/sh"],
        env=env, check=True, timeout=10,
    )  # fmt: skip
    attach = " ".join(
        ["env", *(f"{k}={v}" for k, v in env.items()), "tmux", "-S", socket, "attach", "-t", "work"]
    )
    session = server.new_session(session_name="outer", window_command=attach, x=120, y=30)
    pane = session.active_window.active_pane
    assert pane is not None
    found = Inner(socket, pane, env)

    def attached() -> str:
        return found.tmux("list-clients").stdout.strip()

    wait_for(attached, timeout=10)
    try:
        yield found
    finally:
        found.tmux("kill-server")


def _pending_handover(room: Room) -> int:
    room.join("api")
    room.join("web")
    return room.send_handover("api", "web", body="Take the list view")


def test_the_installed_status_line_shows_the_room_in_status_right(
    inner: Inner, cli: Cli, room: Room, tmp_path: Path
) -> None:
    _pending_handover(room)
    conf = tmp_path / "tmux.conf"
    result = cli("tmux", "install-keys", "--file", str(conf))
    assert result.code == 0, result.err
    for line in ("set -g status-interval 1", "set -g status-right-length 80"):
        assert inner.tmux(*line.split()).returncode == 0
    loaded = inner.tmux("source-file", str(conf))
    assert loaded.returncode == 0, loaded.stderr
    wait_for(lambda: "⚑1 ⏸0 ✗0" in inner.status_line(), timeout=15)

    room.approve(1)
    wait_for(lambda: "⚑0 ⏸0 ✗0" in inner.status_line(), timeout=15)

    assert cli("tmux", "remove-keys", "--file", str(conf)).code == 0
    assert not conf.exists()  # it held only agent-room's lines: nothing is left behind


def test_popup_opens_the_console_over_the_window_and_closes_with_it(
    inner: Inner, room: Room
) -> None:
    _pending_handover(room)
    inner.tmux("send-keys", "-t", "work", "-l", "--", "agent-room popup --until-clear")
    inner.tmux("send-keys", "-t", "work", "Enter")
    wait_for(lambda: "pending handover" in inner.screen(), timeout=30)
    assert "agent-room" in inner.screen()
    wait_for(lambda: "Take the list view" in inner.screen(), timeout=15)

    inner.pane.send_keys("a", enter=False)  # approve the only handover: --until-clear closes
    wait_for(lambda: "pending handover" not in inner.screen(), timeout=15)
    row = room.store.handover(1)
    assert row is not None
    assert row["state"] == "approved"


def test_the_installed_key_opens_the_popup_and_q_closes_it(
    inner: Inner, cli: Cli, room: Room, tmp_path: Path
) -> None:
    room.join("api")
    conf = tmp_path / "tmux.conf"
    assert cli("tmux", "install-keys", "--file", str(conf), "--key", "A").code == 0
    assert inner.tmux("source-file", str(conf)).returncode == 0
    inner.pane.send_keys("C-b", enter=False)
    inner.pane.send_keys("A", enter=False)
    wait_for(lambda: "@api" in inner.screen() and "live /" in inner.screen(), timeout=30)
    inner.pane.send_keys("q", enter=False)
    wait_for(lambda: "live /" not in inner.screen(), timeout=15)


def test_popup_outside_tmux_says_so(cli: Cli) -> None:
    result = cli("popup")
    assert result.code != 0
    assert (
        result.err.strip()
        == "agent-room: agent-room popup opens over a tmux window: run it inside tmux"
    )


def test_the_notifier_shows_what_needs_the_operator_on_every_client(
    inner: Inner, room: Room
) -> None:
    hid = _pending_handover(room)
    notifier = Notifier(room, SystemProbe(), [TmuxChannel(lambda: [inner.socket])], use_lease=False)
    told = notifier.run_once()
    assert [a.key for a in told] == [f"handover:{hid}"]
    wait_for(lambda: f"handover #{hid} waits for you" in inner.status_line(), timeout=10)
    assert notifier.run_once() == []  # told once


def test_what_an_agent_wrote_reaches_tmux_as_text_never_as_a_command(
    inner: Inner, room: Room, tmp_path: Path
) -> None:
    planted = tmp_path / "planted"
    room.join("api")
    room.send("api", "operator", f"#[fg=red]#(touch {planted})")
    notifier = Notifier(room, SystemProbe(), [TmuxChannel(lambda: [inner.socket])], use_lease=False)
    assert [a.kind for a in notifier.run_once()] == ["message"]
    wait_for(lambda: "@api writes to you: #[fg=red]#(touch" in inner.status_line(), timeout=10)
    assert not planted.exists()


def test_popup_opens_on_the_users_terminal_not_on_a_kept_control_client(
    inner: Inner, room: Room
) -> None:
    """``display-popup`` goes to "the current client": from a shell that is tmux's pick
    among the clients on the caller's session, which could be a deliverer's kept
    control-mode client (attached there, more recently active), where nobody sees it."""
    from agent_room.adapters.tmux import Tmux

    _pending_handover(room)
    work = inner.tmux("display-message", "-p", "-t", "work", "#{pane_id}").stdout.strip()
    kept = Tmux()
    try:
        assert kept.pane_exists(inner.socket, work)  # the kept client, attached to "work"
        listed = inner.tmux("list-clients", "-F", "#{client_control_mode}").stdout.split()
        assert sorted(listed) == ["0", "1"]
        inner.tmux("send-keys", "-t", "work", "-l", "--", "agent-room popup --until-clear")
        kept.capture(inner.socket, work)  # the most recently active client just now
        inner.tmux("send-keys", "-t", "work", "Enter")
        wait_for(lambda: "Take the list view" in inner.screen(), timeout=30)
        inner.pane.send_keys("a", enter=False)  # approved: --until-clear closes it
        wait_for(lambda: "pending handover" not in inner.screen(), timeout=15)
    finally:
        kept.close()
