"""``agent-room enter`` on a real Claude Code: an ended session resumes with its own id.

Resuming from outside tmux attaches the terminal to the new pane, so the command runs on
a pseudo-terminal here (a tmux client attaches there and stays until detached); a second
enter while the session is live switches that client to its pane or, without a terminal
to attach, refuses; neither starts another client.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path
from typing import Any

from agent_room.room.views import audit_events
from tests.real.conftest import PROMPT, STARTUP, TURN, RealRoom
from tests.real.model import everything


class Terminal:
    """A command on a pseudo-terminal of its own (stdin and stdout), stderr kept apart."""

    def __init__(self, argv: list[str], env: dict[str, str], err: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.err = err
        with err.open("wb") as stderr:
            self.proc = subprocess.Popen(
                argv,
                stdin=slave,
                stdout=slave,
                stderr=stderr,
                env={**env, "TERM": "xterm-256color"},
                start_new_session=True,
            )
        os.close(slave)
        self.master = master
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        """Read what the terminal shows, so that the tmux client never blocks writing."""
        with contextlib.suppress(OSError):
            while os.read(self.master, 65536):
                pass

    def stderr(self) -> str:
        return self.err.read_text()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._drain.join(timeout=5)
        with contextlib.suppress(OSError):
            os.close(self.master)


def _panes(real: RealRoom) -> list[tuple[str, str, int]]:
    """Every pane of the room's server: session, pane id, pid."""
    out = real.server.cmd("list-panes", "-a", "-F", "#{session_name} #{pane_id} #{pane_pid}")
    return [(s, p, int(pid)) for s, p, pid in (line.split() for line in out.stdout)]


def _gone(pid: int) -> bool:
    """The exited client is gone or a zombie (tmux reaps it when it gets to it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in {"Z", "X"}


def _screen(real: RealRoom, pane: str) -> str:
    return "\n".join(real.server.cmd("capture-pane", "-p", "-t", pane).stdout)


def _events(real: RealRoom, session_id: str) -> list[tuple[str, Any]]:
    room = real.open()
    try:
        return [(e.kind, e.data) for e in audit_events(room) if e.subject == session_id]
    finally:
        room.close()


def test_an_ended_session_resumes_with_its_id_and_a_live_one_is_not_started_twice(
    real: RealRoom,
) -> None:
    real.start("frontend")
    before = real.member("frontend")
    session_id = before["session_id"]
    assert before["state"] == "idle"
    assert before["pane"] == real.pane("frontend").pane_id

    # a conversation to resume: a session with no turn has no transcript to reopen
    real.type("frontend", "REMEMBER: the word is kestrel-51")
    real.wait(lambda: real.seen.turns_showing("frontend", "kestrel-51"), TURN, "frontend")
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, "frontend")
    # the operator's own tmux session: the server outlives the agent's session (with none
    # left it would exit, and a racing `new-session` could land on the exiting server)
    real.server.cmd("new-session", "-d", "-s", "operator", "cat")
    real.type("frontend", "/exit")
    real.wait(lambda: real.member("frontend")["state"] == "ended", TURN, "frontend")
    real.wait(lambda: "ac-frontend" not in real.sessions(), TURN)
    real.wait(lambda: _gone(before["pid"]), TURN)

    argv = [sys.executable, "-m", "agent_room", "enter", "frontend"]
    terminal = Terminal(argv, real.env, real.root / "enter.err")
    try:
        # a new detached session in the agent's cwd runs `claude ... --resume ID`
        real.wait(lambda: "ar-frontend" in real.sessions(), TURN)
        ((_, pane, pid),) = [row for row in _panes(real) if row[0] == "ar-frontend"]
        cwd = real.server.cmd("display-message", "-p", "-t", pane, "#{pane_current_path}")
        assert cwd.stdout == [str(real.root / "frontend")]
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"--resume" in command
        assert command[command.index(b"--resume") + 1].decode() == session_id

        def back() -> bool:
            row = real.member("frontend")
            return row.get("pane") == pane and row.get("state") == "idle"

        try:
            real.wait(back, STARTUP)
        except AssertionError as exc:
            shown = _screen(real, pane)
            shown += f"\n--- panes: {_panes(real)}\n--- enter: {terminal.stderr()}"
            raise AssertionError(f"{exc}\n--- resumed pane:\n{shown}") from None
        after = real.member("frontend")
        assert after["session_id"] == session_id  # the same session continues
        assert after["pid"] == pid  # registered by the resumed client itself
        assert len([n for n in real.who() if n == "frontend"]) == 1
        assert ("session.started", {"resumed": True, "pane": pane}) in _events(real, session_id)
        # the model is shown the conversation from before the exit
        real.wait(lambda: PROMPT in _screen(real, pane), TURN)
        real.server.cmd("send-keys", "-t", pane, "-l", "--", "RECALL: the word?")
        real.wait(lambda: "RECALL" in _screen(real, pane), TURN)
        real.server.cmd("send-keys", "-t", pane, "Enter")
        real.wait(lambda: real.seen.turns_showing("frontend", "RECALL"), TURN)
        recall = next(b for b in real.seen.bodies("frontend") if "RECALL" in everything(b))
        assert "kestrel-51" in everything(recall)
        real.wait(lambda: real.member("frontend")["state"] == "idle", TURN)
        resumed = terminal.stderr()
        assert "resuming @frontend" in resumed, resumed
        assert "--resume" in resumed
        # the command attached this terminal to the resumed pane and waits there
        clients = real.server.cmd("list-clients", "-F", "#{client_session}").stdout
        assert clients == ["ar-frontend"]
        assert terminal.proc.poll() is None

        # live: entering from inside tmux switches the client there, starts nothing
        server_pid = real.server.cmd("display-message", "-p", "#{pid}").stdout[0]
        inside = {**real.env, "TMUX": f"{real.socket},{server_pid},0", "TMUX_PANE": pane}
        panes = _panes(real)
        again = real.cli("enter", "frontend", env=inside)
        assert again.code == 0, again.err
        assert f"entered @frontend in pane {pane}" in again.err
        assert "resuming" not in again.err
        assert _panes(real) == panes

        # live, and no terminal to attach: refused in one line, nothing started
        refused = real.run("enter", "frontend")
        assert refused.code == 1, refused.err
        assert refused.err.strip().splitlines()[-1].startswith("agent-room:")
        assert "not a terminal" in refused.err
        assert "Traceback" not in refused.err
        assert _panes(real) == panes
        assert real.member("frontend")["pid"] == pid

        # detaching ends the command that attached, the agent stays
        real.server.cmd("detach-client", "-s", "ar-frontend")
        real.wait(lambda: terminal.proc.poll() is not None, TURN)
        assert terminal.proc.returncode == 0, terminal.stderr()
        assert real.member("frontend")["state"] == "idle"
    finally:
        terminal.close()


def test_enter_refuses_an_ended_session_that_never_had_a_turn(real: RealRoom) -> None:
    """Claude Code cannot resume a conversation that never began: enter says so instead
    of opening a pane that dies at once."""
    real.start("frontend")
    before = real.member("frontend")
    real.server.cmd("new-session", "-d", "-s", "operator", "cat")  # the server outlives it
    real.type("frontend", "/exit")
    real.wait(lambda: real.member("frontend")["state"] == "ended", TURN, "frontend")
    real.wait(lambda: _gone(before["pid"]), TURN)
    result = real.run("enter", "frontend", "--wait", "0")
    if result.code != 1 or "before its first turn" not in result.err:  # what the room saw
        room = real.open()
        try:
            row = room.store.holder("frontend")
            assert row is not None
            turns = room.store.turns(str(row["session_id"]))
            transcript = Path(str(row["transcript_path"]))
            shown = transcript.read_text()[-3000:] if transcript.exists() else "missing"
        finally:
            room.close()
        raise AssertionError(f"{result}\n--- turns: {turns}\n--- transcript:\n{shown}")
    assert result.code == 1
    assert "@frontend has no conversation to resume: it ended before its first turn" in result.err
    assert "entered" not in result.out + result.err
    assert "ar-frontend" not in real.sessions()
