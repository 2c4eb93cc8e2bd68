"""The tmux adapter types only inert text, literally, and never submits unsafely."""

from __future__ import annotations

import libtmux
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.adapters import procfs
from agent_room.adapters.tmux import PaneFacts, Tmux
from agent_room.core.keys import MAX_TYPED, safe_line
from tests.tmux.conftest import wait_for


def _cat_pane(server: libtmux.Server) -> tuple[str, str]:
    session = server.new_session(session_name="typing", window_command="cat")
    pane = session.active_window.active_pane
    assert pane is not None
    assert pane.pane_id is not None
    return str(server.socket_name), pane.pane_id


def _socket(server: libtmux.Server) -> str:
    import os

    return f"/tmp/tmux-{os.geteuid()}/{server.socket_name}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("-R", "-R"),  # an option to tmux without `--`: here it is just text
        ("C-c", "C-c"),  # a key name: typed, not pressed
        ("echo done;", "echo done"),  # tmux would drop a trailing ';'
        ("a\x03b", "a b"),  # a literal ^C would kill the program
        ("x\x1b[201~y", "xy"),  # a paste end marker would run what follows
        ("one\ntwo", "one two"),  # a newline would submit
    ],
)
def test_typed_text_arrives_literally(server: libtmux.Server, text: str, expected: str) -> None:
    _, pane_id = _cat_pane(server)
    Tmux().type_line(_socket(server), pane_id, text, settle=0.0)
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None

    def last_two() -> list[str]:
        return [ln for ln in pane.capture_pane() if ln.strip()][-2:]

    # the terminal's echo, then cat's copy of the line (wait for both: cat may lag)
    wait_for(lambda: len(last_two()) == 2 and last_two()[1] == last_two()[0])
    assert last_two() == [expected, expected]


def test_no_enter_once_the_pane_is_no_longer_safe(server: libtmux.Server) -> None:
    _, pane_id = _cat_pane(server)
    submitted = Tmux().type_line(
        _socket(server), pane_id, "held back", settle=0.0, still_safe=lambda: False
    )
    assert submitted is False
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None
    wait_for(lambda: "held back" in "\n".join(pane.capture_pane()))
    assert "\n".join(pane.capture_pane()).count("held back") == 1  # echoed, never read


def test_paste_arrives_as_one_block(server: libtmux.Server) -> None:
    _, pane_id = _cat_pane(server)
    Tmux().paste(_socket(server), pane_id, "first line\nsecond\x1b[201~line\n")
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None
    wait_for(lambda: "secondline" in "\n".join(pane.capture_pane()))


class CountingTmux(Tmux):
    """Counts the tmux commands the adapter runs."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []

    def _cmd(self, socket: str | None, *args: str, stdin: str | None = None) -> list[str]:
        self.commands.append(args[0])
        return super()._cmd(socket, *args, stdin=stdin)


def _agent(server: libtmux.Server, pane_id: str) -> tuple[int, int]:
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None
    assert pane.pane_pid is not None
    pid = int(pane.pane_pid)
    stat = wait_for(lambda: procfs.read_stat(pid))
    assert isinstance(stat, procfs.ProcStat)
    return pid, stat.start_ticks


def test_the_check_before_a_nudge_asks_tmux_once_per_pane(server: libtmux.Server) -> None:
    _, pane_id = _cat_pane(server)
    pid, start = _agent(server, pane_id)
    tmux = CountingTmux()
    for _ in range(3):
        assert tmux.typing_refusal(_socket(server), pane_id, pid, start) is None
    assert tmux.commands == ["display-message"]


def test_stale_pane_facts_are_looked_up_again(server: libtmux.Server) -> None:
    """Facts cached from an earlier server on the same socket never refuse wrongly."""
    _, pane_id = _cat_pane(server)
    pid, start = _agent(server, pane_id)
    tmux = Tmux()
    tmux._panes[(_socket(server), pane_id)] = PaneFacts(pid=1, tty=0)
    assert tmux.typing_refusal(_socket(server), pane_id, pid, start) is None
    assert tmux._panes[(_socket(server), pane_id)].pid == pid


def test_an_agent_on_another_terminal_is_refused(server: libtmux.Server) -> None:
    _, pane_a = _cat_pane(server)
    other = server.new_session(session_name="other", window_command="cat")
    pane_b = other.active_window.active_pane
    assert pane_b is not None
    assert pane_b.pane_id is not None
    pid_b, start_b = _agent(server, pane_b.pane_id)
    refusal = Tmux().typing_refusal(_socket(server), pane_a, pid_b, start_b)
    assert refusal == "the agent does not run on the pane's terminal"


@given(st.text(max_size=2000))
def test_safe_line_is_one_inert_line(text: str) -> None:
    line = safe_line(text)
    assert len(line) <= MAX_TYPED
    assert not {"\n", "\r", "\x1b"} & set(line)
    assert all(ord(ch) >= 0x20 and not 0x7F <= ord(ch) <= 0x9F for ch in line)
    assert not line.endswith(";")
    assert "[201~" not in line
    assert "[200~" not in line


def test_libtmux_loads_on_first_use_even_under_a_captured_stdout() -> None:
    """Inside a running console ``sys.stdout`` has no encoding, which libtmux reads when
    imported: the adapter lends it the real one for the import, then puts the capture back."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import agent_room.adapters.tmux as tmux\n"
        "assert 'libtmux' not in sys.modules\n"
        "class Capture:\n"
        "    def write(self, text): pass\n"
        "    def flush(self): pass\n"
        "capture = sys.stdout = Capture()\n"
        "module = tmux._libtmux()\n"
        "assert sys.stdout is capture\n"
        "sys.stdout = sys.__stdout__\n"
        "print(module.__name__, type(tmux._server(None)).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["libtmux", "Server"]
