"""The kept control-mode client: commands on a pane without a tmux process each, the same
text arriving, and a tmux process again whenever the kept client cannot serve."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import libtmux
import pytest

from agent_room.adapters import tmux as tmux_adapter
from agent_room.adapters.tmux import Tmux, TmuxError
from agent_room.adapters.tmux_control import ControlClient, ControlUnavailable, quote
from tests.poll import wait_for


def _socket(server: libtmux.Server) -> str:
    return f"/tmp/tmux-{os.geteuid()}/{server.socket_name}"


def _cat_pane(server: libtmux.Server, name: str = "typing") -> str:
    session = server.new_session(session_name=name, window_command="cat")
    pane = session.active_window.active_pane
    assert pane is not None
    assert pane.pane_id is not None
    return pane.pane_id


def _control_clients(server: libtmux.Server) -> list[str]:
    out = server.cmd("list-clients", "-F", "#{client_control_mode} #{client_flags}").stdout
    return [line for line in out if line.startswith("1 ")]


@pytest.fixture
def no_tmux_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any command that would start a tmux process (through libtmux) fails the test."""

    def refuse(_socket: str | None) -> Any:
        raise AssertionError("a tmux process was started for a command on a pane")

    monkeypatch.setattr(tmux_adapter, "_server", refuse)


def _last_line(server: libtmux.Server, pane_id: str) -> str:
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None
    lines = [ln for ln in pane.capture_pane() if ln.strip()]
    return lines[-1] if lines else ""


@pytest.mark.usefixtures("no_tmux_process")
def test_commands_on_a_pane_share_one_kept_client(server: libtmux.Server) -> None:
    pane_id = _cat_pane(server)
    tmux = Tmux()
    try:
        assert tmux.pane_facts(_socket(server), pane_id) is not None
        for n in range(5):
            assert tmux.type_line(_socket(server), pane_id, f"line {n}", settle=0.0)
        wait_for(lambda: "line 4" in tmux.capture(_socket(server), pane_id))
        clients = _control_clients(server)
        assert len(clients) == 1
        assert "ignore-size" in clients[0]
        assert "no-output" in clients[0]
    finally:
        tmux.close()
    wait_for(lambda: not _control_clients(server))  # closed: detached, nothing left behind


@pytest.mark.usefixtures("no_tmux_process")
@pytest.mark.parametrize(
    "text",
    [
        "it's 'quoted' and \"double\"",
        "$HOME ~ ${PATH} #{pane_id} #[fg=red]",
        "a \\n b \\' c \\\\",
        "one; two ; three {",
        "%if 1",
        "-R",
    ],
)
def test_text_arrives_literally_through_the_kept_client(server: libtmux.Server, text: str) -> None:
    pane_id = _cat_pane(server)
    tmux = Tmux()
    try:
        tmux.type_line(_socket(server), pane_id, text, settle=0.0)
        wait_for(lambda: _last_line(server, pane_id) == text)  # cat's copy, after Enter
    finally:
        tmux.close()


@pytest.mark.usefixtures("no_tmux_process")
def test_the_line_is_emptied_and_typed_in_one_write_and_enter_comes_alone(
    server: libtmux.Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Emptying the input line and typing the text are written to tmux at once (one
    wake-up of tmux and of the deliverer for both); Enter stays a command of its own,
    after the pane is checked again."""
    pane_id = _cat_pane(server)
    tmux = Tmux()
    writes: list[list[str]] = []
    run_all = ControlClient.run_all

    def spy(self: ControlClient, target: str, commands: Any) -> Any:
        writes.append([args[-1] for args in commands])
        return run_all(self, target, commands)

    monkeypatch.setattr(ControlClient, "run_all", spy)
    try:
        tmux._cmd(_socket(server), "send-keys", "-t", pane_id, "-l", "--", "half typed")
        writes.clear()
        checked: list[int] = []

        def still_safe() -> bool:
            checked.append(len(writes))
            return True

        assert tmux.type_line(
            _socket(server), pane_id, "the line", settle=0.0, clear=("C-u",), still_safe=still_safe
        )
        assert writes == [["C-u", "the line"], ["Enter"]]
        assert checked == [1]  # between the text and Enter
        wait_for(lambda: _last_line(server, pane_id) == "the line")  # cat's copy
    finally:
        tmux.close()


@pytest.mark.usefixtures("no_tmux_process")
def test_a_command_refused_by_tmux_is_an_error_of_the_pane(server: libtmux.Server) -> None:
    pane_id = _cat_pane(server)
    tmux = Tmux()
    try:
        tmux.pane_facts(_socket(server), pane_id)
        with pytest.raises(TmuxError, match="can't find pane"):
            tmux.press_enter(_socket(server), "%999")
        assert tmux.pane_facts(_socket(server), "%999") is None
    finally:
        tmux.close()


def test_a_client_that_cannot_attach_leaves_the_command_to_a_tmux_process(
    server: libtmux.Server,
) -> None:
    pane_id = _cat_pane(server)
    tmux = Tmux()
    try:
        # the first pane asked about does not exist: the kept client cannot attach to it
        assert tmux.pane_facts(_socket(server), "%999") is None
        assert tmux.type_line(_socket(server), pane_id, "by a tmux process", settle=0.0)
        wait_for(lambda: _last_line(server, pane_id) == "by a tmux process")
        assert not _control_clients(server)
    finally:
        tmux.close()


@pytest.mark.usefixtures("no_tmux_process")
def test_the_kept_client_attaches_again_when_its_session_ends(server: libtmux.Server) -> None:
    first = _cat_pane(server, "first")
    second = _cat_pane(server, "second")
    tmux = Tmux()
    try:
        tmux.type_line(_socket(server), first, "to the first", settle=0.0)
        assert len(_control_clients(server)) == 1  # attached to "first"
        server.cmd("kill-session", "-t", "first")
        wait_for(lambda: not _control_clients(server))  # it was attached there: detached
        tmux.type_line(_socket(server), second, "to the second", settle=0.0)
        wait_for(lambda: _last_line(server, second) == "to the second")
        assert len(_control_clients(server)) == 1  # the kept client again, not a process
    finally:
        tmux.close()


def test_control_characters_are_never_put_on_a_command_line() -> None:
    for bad in ("a\nb", "a\rb", "\x1b[201~", "\x7f"):
        with pytest.raises(ControlUnavailable):
            quote(bad)
    assert quote("it's") == "'it'\\''s'"


def test_switching_moves_the_users_client_not_the_kept_one(
    server: libtmux.Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``switch-client`` acts on "the current client": with the kept client attached to
    the caller's session and just active, tmux would pick it, and the user's terminal
    would stay where it was (``enter`` and ``exit-agent`` seemed to do nothing)."""
    import shutil

    socket = _socket(server)
    desk = _cat_pane(server, "desk")
    here = _cat_pane(server, "here")
    server.new_session(  # the user's terminal, looking at "here"
        session_name="terminal",
        window_command=f"env -u TMUX {shutil.which('tmux')} -S {socket} attach -t here",
    )

    def viewers() -> list[str]:
        out = server.cmd("list-clients", "-F", "#{client_control_mode} #{client_session}")
        return [line.split()[1] for line in out.stdout if line.startswith("0 ")]

    wait_for(lambda: viewers() == ["here"])
    monkeypatch.setenv("TMUX", f"{socket},1,0")
    monkeypatch.setenv("TMUX_PANE", here)
    tmux = Tmux()
    try:
        assert tmux.pane_exists(socket, here)  # through the kept client, attached to "here"
        assert _control_clients(server)
        tmux.switch_client(socket, desk)
        wait_for(lambda: viewers() == ["desk"], timeout=5)
    finally:
        tmux.close()


OWNER = """
import ctypes, sys
from agent_room.adapters.tmux import Tmux
tmux = Tmux()
assert tmux.pane_exists(sys.argv[1], sys.argv[2])
print(tmux._control._clients[sys.argv[1]]._proc.pid, flush=True)
# wait to be told to go holding the interpreter (PyDLL keeps it): the client's answers
# are not read meanwhile, and then this process ends the ordinary way
ctypes.PyDLL(None).read(0, ctypes.create_string_buffer(1), 1)
if sys.argv[3] == "drop":
    del tmux
"""


@pytest.mark.parametrize("how", ["drop", "exit"])
def test_a_kept_client_ends_with_what_kept_it(server: libtmux.Server, how: str) -> None:
    """tmux writes a control client's output to the pipe itself: if the reader goes away
    while output is queued for it (notifications of a switch or a rename just then, or a
    lot of them), that client never exits, stays attached to the user's session, and keeps
    the server from exiting. Its owner ends it when dropped or at exit, unasked."""
    import subprocess
    import sys

    pane_id = _cat_pane(server)
    socket = _socket(server)
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, socket, pane_id, how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None
    kept = int(owner.stdout.readline())
    name = "w" * 1000  # tmux has to hold on to much more than a pipe takes
    for n in range(100):
        renames = []
        for m in range(10):  # (a command line of tmux holds at most about 16 kB)
            renames += ["rename-window", "-t", "typing:0", f"{name}{n}.{m}", ";"]
        assert not server.cmd(*renames[:-1]).stderr
    owner.communicate("", timeout=30)
    assert owner.returncode == 0
    try:
        wait_for(lambda: _state(kept) is None, timeout=5)
    finally:
        if _state(kept) is not None:  # left behind: end it, or the server never exits
            os.kill(kept, signal.SIGTERM)
    wait_for(lambda: not _control_clients(server), timeout=5)


def _state(pid: int) -> str | None:
    """The process's state letter, None if it has gone (or is only a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state = stat.rsplit(")", 1)[1].split()[0]
    return None if state == "Z" else state
