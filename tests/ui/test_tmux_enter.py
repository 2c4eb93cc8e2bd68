"""The multiplexer's enter methods against real tmux: switch a real client, open windows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import libtmux
import pytest

from agent_room.adapters.tmux import Tmux, TmuxError
from tests.conftest import require_tool
from tests.poll import wait_for

pytestmark = pytest.mark.tmux


def _socket(server: libtmux.Server) -> str:
    return f"/tmp/tmux-{os.geteuid()}/{server.socket_name}"


@pytest.fixture(autouse=True)
def _need_tmux() -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")


def _clients(server: libtmux.Server) -> list[str]:
    return list(server.cmd("list-clients", "-F", "#{client_session}").stdout)


def test_switch_client_moves_an_attached_client_to_the_agent_pane(
    server: libtmux.Server,
) -> None:
    socket = _socket(server)
    agent = server.new_session(session_name="agent", window_command="cat")
    agent.new_window(window_name="other", window_shell="cat", attach=True)  # now in front
    pane = agent.windows[0].active_pane
    assert pane is not None
    assert pane.pane_id is not None
    server.new_session(session_name="desk", window_command="cat")
    # a real client, attached from a pane of a helper session (TMUX unset: no nesting guard)
    server.new_session(
        session_name="terminal",
        window_command=f"env -u TMUX {shutil.which('tmux')} -S {socket} attach -t desk",
    )
    wait_for(lambda: _clients(server) == ["desk"])

    Tmux().switch_client(socket, pane.pane_id)
    wait_for(lambda: _clients(server) == ["agent"])
    active = server.cmd("display-message", "-p", "-t", "agent", "#{pane_id}").stdout
    assert active == [pane.pane_id]


def test_open_window_starts_the_command_in_the_cwd(server: libtmux.Server, tmp_path: Path) -> None:
    socket = _socket(server)
    server.new_session(session_name="desk", window_command="cat")
    mux = Tmux()
    pane = mux.open_window(socket, str(tmp_path), ("cat",), name="ar-docs", inside=False)
    assert mux.pane_exists(socket, pane)
    found = server.cmd("display-message", "-p", "-t", pane, "#{session_name} #{pane_current_path}")
    assert found.stdout == [f"ar-docs {tmp_path}"]
    window = mux.open_window(socket, str(tmp_path), ("cat",), name="docs-resumed", inside=True)
    assert mux.pane_exists(socket, window)
    assert not mux.pane_exists(socket, "%999")
    with pytest.raises(TmuxError):
        mux.switch_client(socket, "not-a-pane")
