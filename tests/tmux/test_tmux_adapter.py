"""The tmux adapter types only inert text, literally, and never submits unsafely."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import libtmux
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.adapters.tmux import PaneFacts, Tmux
from agent_room.core.keys import MAX_TYPED, safe_line
from agent_room.turn import procfs
from tests.poll import wait_for


def _cat_pane(server: libtmux.Server) -> tuple[str, str]:
    session = server.new_session(session_name="typing", window_command="cat")
    pane = session.active_window.active_pane
    assert pane is not None
    assert pane.pane_id is not None
    return str(server.socket_name), pane.pane_id


def _socket(server: libtmux.Server) -> str:
    import os

    return f"/tmp/tmux-{os.geteuid()}/{server.socket_name}"


class CountingTmux(Tmux):
    """Counts the tmux commands the adapter runs."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []
        self.sent: list[tuple[str, ...]] = []
        self.stdin: list[str | None] = []
        self._counted = False

    def _cmd(self, socket: str | None, *args: str, stdin: str | None = None) -> list[str]:
        if not self._counted:
            self._count(args, stdin)
        return super()._cmd(socket, *args, stdin=stdin)

    def _cmds(self, socket: str | None, pane: str, *commands: Sequence[str]) -> None:
        for args in commands:  # written at once, each one a command of its own
            self._count(tuple(args), None)
        self._counted = True  # (not again if they fall back to one by one)
        try:
            super()._cmds(socket, pane, *commands)
        finally:
            self._counted = False

    def _count(self, args: tuple[str, ...], stdin: str | None) -> None:
        self.commands.append(args[0])
        self.sent.append(args)
        self.stdin.append(stdin)


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
    """The pane is asked again just before Enter: a pane gone unsafe gets no Enter."""
    _, pane_id = _cat_pane(server)
    tmux = CountingTmux()
    asked: list[str] = []

    def still_safe() -> bool:
        asked.append(str(tmux.sent[-1]))  # asked after the text, before any Enter
        return False

    submitted = tmux.type_line(
        _socket(server), pane_id, "held back", settle=0.0, still_safe=still_safe
    )
    assert submitted is False
    assert asked == [str(("send-keys", "-t", pane_id, "-l", "--", "held back"))]
    assert tmux.sent == [("send-keys", "-t", pane_id, "-l", "--", "held back")]
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None
    wait_for(lambda: "held back" in "\n".join(pane.capture_pane()))
    assert "\n".join(pane.capture_pane()).count("held back") == 1  # echoed, never read


def test_text_and_enter_are_two_commands_and_the_text_is_literal(server: libtmux.Server) -> None:
    """``-l --``: the text is never a key name nor an option; Enter is its own command."""
    _, pane_id = _cat_pane(server)
    tmux = CountingTmux()
    assert tmux.type_line(_socket(server), pane_id, "-R", settle=0.0, still_safe=lambda: True)
    assert tmux.sent == [
        ("send-keys", "-t", pane_id, "-l", "--", "-R"),
        ("send-keys", "-t", pane_id, "Enter"),
    ]


def test_enter_waits_the_settle_delay_after_the_text(
    server: libtmux.Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex and Gemini CLI turn an Enter that follows the text at once into a newline."""
    import time

    _, pane_id = _cat_pane(server)
    tmux = CountingTmux()
    order: list[object] = []
    monkeypatch.setattr(time, "sleep", lambda s: order.append(("sleep", s)))

    def still_safe() -> bool:
        order.append("check")
        return True

    tmux.type_line(_socket(server), pane_id, "hi", settle=0.06, still_safe=still_safe)
    assert order == [("sleep", 0.06), "check"]  # text, settle, the check, then Enter
    assert [c[-1] for c in tmux.sent] == ["hi", "Enter"]


def test_the_input_line_is_cleared_with_control_keys_only(server: libtmux.Server) -> None:
    _, pane_id = _cat_pane(server)
    tmux = CountingTmux()
    tmux.type_line(_socket(server), pane_id, "nudge", settle=0.0, clear=("C-e", "C-u"))
    assert tmux.sent[0] == ("send-keys", "-t", pane_id, "C-e", "C-u")
    assert tmux.sent[1] == ("send-keys", "-t", pane_id, "-l", "--", "nudge")
    for keys in (("Enter",), ("C-u", "rm -rf /"), ("Escape",), ("-R",)):
        with pytest.raises(ValueError, match="not a line-editing key"):
            tmux.type_line(_socket(server), pane_id, "nudge", settle=0.0, clear=keys)
    assert len(tmux.sent) == 3  # nothing more was sent for the refused keys


def test_a_cleared_line_leaves_only_the_new_text(server: libtmux.Server) -> None:
    """A half-typed line (an earlier nudge never submitted) is not prefixed to the next."""
    _, pane_id = _cat_pane(server)
    tmux = Tmux()
    tmux._cmd(_socket(server), "send-keys", "-t", pane_id, "-l", "--", "old nudge")
    tmux.type_line(_socket(server), pane_id, "new nudge", settle=0.0, clear=("C-u",))
    pane = server.panes.get(pane_id=pane_id)
    assert pane is not None

    def lines() -> list[str]:
        return [ln for ln in pane.capture_pane() if ln.strip()]

    wait_for(lambda: lines().count("new nudge") == 2)  # the echo and cat's copy
    assert not any("old" in ln for ln in lines())


def test_a_paste_is_bracketed_from_its_own_buffer_without_markers(
    server: libtmux.Server,
) -> None:
    _, pane_id = _cat_pane(server)
    tmux = CountingTmux()
    tmux.paste(_socket(server), pane_id, "a\x1b[201~b\n[201~c[200~\x1b]2;title\x07\nd\x03")
    (load, paste) = tmux.sent
    assert load == ("load-buffer", "-b", load[2], "-")
    assert load[2].startswith("agent-room-")
    assert len(load[2]) > len("agent-room-") + 16
    assert paste == ("paste-buffer", "-p", "-d", "-b", load[2], "-t", pane_id)
    assert tmux.stdin[0] == "ab\nc\nd"
    second = CountingTmux()
    second.paste(_socket(server), pane_id, "x")
    assert second.sent[0][2] != load[2]  # a unique buffer each time


RECORDER = """
import os, sys, tty
fd = sys.stdin.fileno()
tty.setraw(fd)
os.write(1, b"\\x1b[?2004hREADY")
with open(sys.argv[1], "ab", buffering=0) as out:
    while data := os.read(fd, 4096):
        out.write(data)
"""
"""A program that asks for bracketed pastes (as agents' prompts do) and records every byte
it receives, raw."""


def test_paste_arrives_as_one_block(server: libtmux.Server, tmp_path: Path) -> None:
    received = tmp_path / "received"
    command = f"{sys.executable} -c {shlex.quote(RECORDER)} {received}"
    session = server.new_session(session_name="paste", window_command=command)
    pane = session.active_window.active_pane
    assert pane is not None
    assert pane.pane_id is not None
    # READY is drawn after the mode switch, so tmux knows the pane wants bracketed pastes
    wait_for(lambda: "READY" in "\n".join(pane.capture_pane()))
    Tmux().paste(_socket(server), pane.pane_id, "first line\nsecond\x1b[201~line\n")
    data = wait_for(
        lambda: (
            received.exists() and b"\x1b[201~" in received.read_bytes() and received.read_bytes()
        )
    )
    assert isinstance(data, bytes)
    # one paste: one start marker, one end marker at the very end, the planted end
    # marker gone, the lines inside it (tmux sends newlines as carriage returns)
    assert data.startswith(b"\x1b[200~")
    assert data.endswith(b"\x1b[201~")
    assert (data.count(b"\x1b[200~"), data.count(b"\x1b[201~")) == (1, 1)
    inner = data.removeprefix(b"\x1b[200~").removesuffix(b"\x1b[201~")
    assert inner.replace(b"\r", b"\n").rstrip(b"\n") == b"first line\nsecondline"


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


def _shell_pane(server: libtmux.Server) -> tuple[str, int, int]:
    session = server.new_session(session_name="shell", window_command="bash --norc")
    pane = session.active_window.active_pane
    assert pane is not None
    assert pane.pane_id is not None
    pid, start = _agent(server, pane.pane_id)
    return pane.pane_id, pid, start


def test_a_shell_prompt_is_refused(server: libtmux.Server) -> None:
    pane_id, pid, start = _shell_pane(server)
    refusal = Tmux().typing_refusal(_socket(server), pane_id, pid, start)
    assert refusal == "the pane is at a shell prompt"


def test_a_program_in_front_of_the_agent_is_refused(server: libtmux.Server) -> None:
    """The registered process must own its terminal's foreground (an editor, a pager or a
    command in front of it would take the keys)."""
    pane_id, pid, start = _shell_pane(server)
    server.cmd("send-keys", "-t", pane_id, "-l", "--", "sleep 30")
    server.cmd("send-keys", "-t", pane_id, "Enter")

    def in_front() -> bool:
        stat = procfs.read_stat(pid)
        return stat is not None and stat.tpgid != stat.pgrp

    wait_for(in_front)
    refusal = Tmux().typing_refusal(_socket(server), pane_id, pid, start)
    assert refusal == "the agent is not in the foreground of its terminal"


def test_panes_are_targeted_by_id_only(server: libtmux.Server) -> None:
    _, pane_id = _cat_pane(server)
    pid, start = _agent(server, pane_id)
    for target in ("typing", "typing:0", "=typing:", "%", "%1x"):
        refusal = Tmux().typing_refusal(_socket(server), target, pid, start)
        assert refusal == f"not a pane id: {target!r}"


def test_a_dead_or_reused_agent_pid_is_refused(server: libtmux.Server) -> None:
    _, pane_id = _cat_pane(server)
    pid, start = _agent(server, pane_id)
    assert Tmux().typing_refusal(_socket(server), pane_id, None, None) == (
        "no agent process is registered for the pane"
    )
    refusal = Tmux().typing_refusal(_socket(server), pane_id, pid, start + 1)  # another start
    assert refusal == "the agent's process is gone"


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
