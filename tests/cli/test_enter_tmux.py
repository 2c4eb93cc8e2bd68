"""``agent-room enter`` and ``exit-agent --root`` as processes on a real tmux server with
a real attached client: every hop walked back, the parent told, the messages right."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
from pathlib import Path

import libtmux
import pytest

from tests.cli.test_enter_cli import _register
from tests.conftest import Cli, Result, require_tool
from tests.poll import wait_for

pytestmark = pytest.mark.tmux

NO_SESSION = {"CLAUDECODE": "", "CLAUDE_CODE_SESSION_ID": ""}
"""A plain terminal, or a client that does not say its session."""


@pytest.fixture(autouse=True)
def _need_tmux() -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")


def _pane(session: libtmux.Session) -> tuple[str, int]:
    pane = session.windows[0].active_pane
    assert pane is not None
    assert pane.pane_id is not None
    assert pane.pane_pid is not None
    return pane.pane_id, int(pane.pane_pid)


def _client_on(server: libtmux.Server) -> list[str]:
    return list(server.cmd("list-clients", "-F", "#{client_session}").stdout)


def _wait_on(server: libtmux.Server, session: str) -> None:
    """Wait until the one client shows ``session``; say which clients there are if not."""
    try:
        wait_for(lambda: _client_on(server) == [session])
    except AssertionError as exc:
        raise AssertionError(f"{exc}; clients {_clients(server)}") from None


def _clients(server: libtmux.Server) -> list[str]:
    """Every client: its session, whether control mode, its process and that's parent."""
    fmt = "#{client_session} control=#{client_control_mode} #{client_pid}"
    listed = server.cmd("list-clients", "-F", fmt).stdout
    return [f"{line} {_process(line.rsplit(' ', 1)[-1])}" for line in listed]


def _process(pid: str) -> str:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
    except OSError:
        return "(gone)"
    return f"{cmdline.strip()} (parent {ppid})"


def _run(cli: Cli, socket: str, pane: str, *args: str) -> Result:
    env = {**NO_SESSION, "TMUX": f"{socket},1,0", "TMUX_PANE": pane}
    result = cli(*args, "--wait", "0", env=env) if args[0] == "enter" else cli(*args, env=env)
    assert result.code == 0, result
    assert "Traceback" not in result.err
    return result


def test_enter_twice_from_plain_terminals_then_exit_to_the_root(
    server: libtmux.Server, cli: Cli, room_home: Path
) -> None:
    socket = f"/tmp/tmux-{os.geteuid()}/{server.socket_name}"
    desk, _ = _pane(server.new_session(session_name="desk", window_command="cat"))
    pane_a, pid_a = _pane(server.new_session(session_name="agent-a", window_command="sleep 600"))
    pane_b, pid_b = _pane(server.new_session(session_name="agent-b", window_command="sleep 600"))
    _register(room_home, "a", pid_a, pane=pane_a, socket=socket)
    _register(room_home, "b", pid_b, pane=pane_b, socket=socket, parent="a")
    server.new_session(  # a real client, looking at the operator's desk
        session_name="terminal",
        window_command=f"env -u TMUX {shutil.which('tmux')} -S {socket} attach -t desk",
    )
    _wait_on(server, "desk")

    entered = _run(cli, socket, desk, "enter", "a")
    _wait_on(server, "agent-a")
    assert entered.err.endswith(
        f"agent-room: entered @a in pane {pane_a}; back with: agent-room exit-agent\n"
    )
    # from a's pane, by a client that does not say its session: b's parent is told
    entered = _run(cli, socket, pane_a, "enter", "b")
    _wait_on(server, "agent-b")
    assert (
        "agent-room: parent session: sess-a (@a); return to it with: agent-room enter sess-a\n"
        in entered.err
    )

    os.kill(pid_a, signal.SIGKILL)  # the parent dies without a word
    wait_for(lambda: not Path(f"/proc/{pid_a}").exists() or _zombie(pid_a))
    again = _run(cli, socket, pane_a, "enter", "b")
    assert f"warning: parent process {pid_a} is no longer running (@a, session sess-a)" in (
        again.err
    )

    back = _run(cli, socket, pane_b, "exit-agent", "--root")
    assert back.err == f"agent-room: back in pane {desk}\n"
    _wait_on(server, "desk")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_exit_agent_gives_back_a_terminal_outside_tmux(
    server: libtmux.Server, cli: Cli, room_home: Path
) -> None:
    """``enter`` from a terminal outside tmux attaches it; ``exit-agent`` in the agent's
    pane detaches that terminal again, and ``enter`` returns there with a word."""
    socket = f"/tmp/tmux-{os.geteuid()}/{server.socket_name}"
    pane_a, pid_a = _pane(server.new_session(session_name="agent-a", window_command="sleep 600"))
    _register(room_home, "a", pid_a, pane=pane_a, socket=socket)
    given = cli.env(NO_SESSION)
    env = " ".join(shlex.quote(f"{k}={given[k]}") for k in ("AGENT_ROOM_HOME", "PATH", "HOME"))
    enter = f"{sys.executable} -m agent_room enter a --wait 0"
    terminal = server.new_session(  # a plain terminal: no $TMUX, its own tty
        session_name="terminal",
        window_command=f"env -u TMUX -u TMUX_PANE {env} {enter}; echo ENTER-ENDED; sleep 600",
    )
    screen = terminal.windows[0].active_pane
    assert screen is not None

    def attached() -> bool:  # the terminal's client (enter's own control client has no tty)
        listed = server.cmd("list-clients", "-F", "#{client_tty} #{client_session}").stdout
        return any(line.startswith("/dev/") and line.endswith(" agent-a") for line in listed)

    try:
        wait_for(attached)
    except AssertionError as exc:
        raise AssertionError("\n".join(screen.capture_pane())) from exc

    back = _run(cli, socket, pane_a, "exit-agent")
    assert back.err.startswith("agent-room: detached the terminal /dev/pts/"), back.err
    wait_for(lambda: "ENTER-ENDED" in "\n".join(screen.capture_pane()))
    shown = "\n".join(screen.capture_pane())
    assert "come back: detach (C-b d) or agent-room exit-agent" in shown
    assert "back from @a" in shown
    assert not attached()
