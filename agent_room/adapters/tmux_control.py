"""A kept tmux control-mode client per server: a tmux command in well under a millisecond.

A ``tmux`` process per command costs 2-4 ms (and more on a loaded machine), which is
most of what a nudge costs once the deliverer is awake. A control-mode client
(``tmux -C attach``) stays connected and runs each command line it is given, answering
between ``%begin`` and ``%end`` (or ``%error``). Only commands that act on an explicit
target pane go through it (``send-keys``, ``display-message -p``, ``capture-pane -p``):
anything that acts on "the current client" would act on this one instead of the user's.

Traps of control mode, and how this client keeps out of them: a bare ``tmux -C`` creates a
session, so it only ever attaches, to the session of the pane it was first asked about;
``ignore-size`` keeps it from shrinking windows and ``no-output`` from receiving every
pane's output. It is owned by the object that starts it, which ends it when closed,
dropped or at the process's exit (its input closed while its output is still read), by its
own pid, never by a name: tmux writes a control client's output into the pipe itself, and
a client whose reader is gone while output is queued for it (a notification of a switch
made just then) never exits, stays attached to the user's session and keeps the server
from exiting.
Whatever goes wrong with it (it cannot attach, it dies, an answer is late) the caller
falls back to a ``tmux`` process for that command.

The thread that asks reads its own answer: handing each answer over from a reader thread
woke two threads per command, and on a loaded machine that hand-over alone made one
command in twenty take a millisecond or more (a nudge is three commands). Between
commands a thread of its own drops the notifications tmux writes meanwhile, once a
second, so that they never pile up while nothing is asked.

Arguments are quoted for tmux's own command parser: single quotes (nothing inside them is
expanded, and ``;`` stays text), a single quote itself as ``\\'`` outside them. A newline
could never be quoted, so an argument with a control character is refused here (the
typed text is made safe before it gets this far).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Sequence

TIMEOUT = 2.0
"""Seconds to wait for an answer before the client is given up."""
IDLE_DRAIN = 1.0
"""Seconds between two reads of the notifications written while nothing is asked."""
END_WAIT = 0.5
"""Seconds a client is given to exit once its input is closed, before it is killed."""
RETRY_AFTER = 5.0
"""Seconds before a client that failed to start is tried again for the same server."""
COMMANDS = frozenset({"send-keys", "display-message", "capture-pane"})
"""What may go through the kept client: commands on an explicit ``-t`` pane only."""


class ControlUnavailable(Exception):
    """The kept client cannot run this command: run a tmux process instead."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
"""A control character (C0 or DEL)."""


def quote(arg: str) -> str:
    """``arg`` as one token of tmux's command language, taken literally."""
    if _CONTROL.search(arg):
        raise ControlUnavailable("a control character cannot be quoted on a command line")
    return "'" + arg.replace("'", "'\\''") + "'"


class ControlClient:
    """One ``tmux -C attach`` on one server, started on first use.

    Commands are written under a lock, a line each, and the asking thread reads their
    answers itself (tmux never interleaves its notifications with a command's output),
    dropping the notifications before them.
    """

    def __init__(self, socket: str | None) -> None:
        self.socket = socket
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: _Output | None = None
        self._end: Callable[[], object] = lambda: None
        """Ends the running client, once (a ``weakref.finalize``)."""
        self._failed_at: float | None = None

    def run(self, target: str, *args: str) -> tuple[bool, list[str]]:
        """Run one command; (ok, output lines). ``target`` is a pane the client may
        attach to if it is not running yet. Raises ``ControlUnavailable`` to fall back."""
        return self.run_all(target, [args])[0]

    def run_all(
        self, target: str, commands: Sequence[Sequence[str]]
    ) -> list[tuple[bool, list[str]]]:
        """Run commands written at once, a line each (one wake-up of tmux and one of this
        thread for all of them); each one's (ok, output lines), in order."""
        lines = b"".join(" ".join(quote(a) for a in args).encode() + b"\n" for args in commands)
        with self._lock:
            proc, out = self._running(target)
            answers: list[tuple[bool, list[str]]] = []
            with out.lock:
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(lines)
                    proc.stdin.flush()
                    while len(answers) < len(commands):
                        answer = out.answer(TIMEOUT)
                        if answer is None:
                            break
                        answers.append(answer)
                except OSError:
                    pass
            if len(answers) < len(commands):  # it died or hangs: never wait on it again
                self._stop()
                raise ControlUnavailable("the control client did not answer")
            return answers

    def close(self) -> None:
        """End the client (by its own pid)."""
        with self._lock:
            self._stop()

    def _running(self, target: str) -> tuple[subprocess.Popen[bytes], _Output]:
        if self._proc is not None and self._out is not None and self._proc.poll() is None:
            return self._proc, self._out
        self._stop()
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER:
            raise ControlUnavailable("the control client failed to start a moment ago")
        try:
            return self._start(target)
        except (OSError, ControlUnavailable):
            self._failed_at = time.monotonic()
            self._stop()
            raise ControlUnavailable("the control client did not start") from None

    def _start(self, target: str) -> tuple[subprocess.Popen[bytes], _Output]:
        where = ["-S", self.socket] if self.socket else []
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        if not self.socket and "TMUX" in os.environ:  # the server $TMUX names, explicitly
            where = ["-S", os.environ["TMUX"].split(",", 1)[0]]
        argv = ["tmux", *where, "-C", "attach-session", "-f", "ignore-size,no-output"]
        proc = subprocess.Popen(
            [*argv, "-t", target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # no terminal signals from the caller's terminal
        )
        out = _Output(proc)
        self._proc, self._out = proc, out
        self._end = weakref.finalize(self, _end, proc, out)  # also run at exit
        with out.lock:  # the attach itself is answered first
            first = out.answer(TIMEOUT)
        if first is None or not first[0]:
            raise ControlUnavailable("tmux did not attach the control client")
        threading.Thread(
            target=_drain_while_idle, args=(out,), name="agent-room-tmux-control", daemon=True
        ).start()
        self._failed_at = None
        return proc, out

    def _stop(self) -> None:
        self._proc = self._out = None
        self._end()


class _Output:
    """What a kept client writes: read by the command waiting for its answer, between
    commands by ``_drain_while_idle``, at the end by ``_end``; by one of them at a time
    (``lock``), never once it is closed."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.stream = proc.stdout
        self.fd = proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.lock = threading.Lock()
        self.ended = threading.Event()
        """Set once the client is being ended: nothing more is read."""
        self._poll = select.poll()
        self._poll.register(self.fd, select.POLLIN)
        self._pending = bytearray()

    def answer(self, timeout: float) -> tuple[bool, list[str]] | None:
        """The next command's answer, the notifications before it dropped; None if the
        client ends or does not answer in ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        guard: bytes | None = None
        lines: list[str] = []
        while (line := self._line(deadline)) is not None:
            if guard is None:
                if line.startswith(b"%begin "):
                    guard, lines = line.split(b" ", 1)[1], []
                continue  # a notification between answers
            if line.startswith((b"%end ", b"%error ")) and line.split(b" ", 1)[1] == guard:
                return line.startswith(b"%end "), lines
            lines.append(line.decode(errors="replace"))
        return None

    def drain(self) -> bool:
        """Drop the whole lines written meanwhile (notifications: nothing is asked);
        False once the client has gone."""
        while True:
            read = self._read(0)
            if read is None:
                return False
            if not read:
                break
        cut = self._pending.rfind(b"\n")
        del self._pending[: cut + 1]
        return True

    def read_to_end(self, deadline: float) -> None:
        """Read (and drop) all the client writes until it ends, or until ``deadline``."""
        while self._line(deadline) is not None:
            pass

    def _line(self, deadline: float) -> bytes | None:
        while (at := self._pending.find(b"\n")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or self._read(left) is None:
                return None
        line = bytes(self._pending[:at])
        del self._pending[: at + 1]
        return line

    def _read(self, timeout: float) -> bool | None:
        """Add what the client wrote, waiting up to ``timeout`` seconds for it: whether
        there was any; None at its end."""
        if timeout > 0 and not self._poll.poll(timeout * 1000):
            return False
        try:
            chunk = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return False
        except OSError:
            return None
        if not chunk:
            return None
        self._pending += chunk
        return True


def _drain_while_idle(out: _Output) -> None:
    """Between commands: drop the notifications tmux writes, until the client ends."""
    while not out.ended.wait(IDLE_DRAIN):
        with out.lock:
            if out.ended.is_set() or not out.drain():
                return


def _end(proc: subprocess.Popen[bytes], out: _Output) -> None:
    """End a kept client: its input closed, it detaches once tmux has written out what it
    had queued (read here meanwhile); killed if it does not."""
    out.ended.set()
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    held = out.lock.acquire(timeout=TIMEOUT)  # a command still waiting gives up first
    try:
        deadline = time.monotonic() + END_WAIT
        if held:
            out.read_to_end(deadline)  # what tmux had queued, until the client's end
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=END_WAIT)
        if held:
            with contextlib.suppress(OSError):
                out.stream.close()
    finally:
        if held:
            out.lock.release()


class ControlClients:
    """The kept clients of one process, one per server socket."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[str | None, ControlClient] = {}

    def run(self, socket: str | None, target: str, *args: str) -> tuple[bool, list[str]]:
        """Run ``args`` through the server's kept client (see ``ControlClient.run``)."""
        return self.run_all(socket, target, [args])[0]

    def run_all(
        self, socket: str | None, target: str, commands: Sequence[Sequence[str]]
    ) -> list[tuple[bool, list[str]]]:
        """Run commands at once through the server's kept client (``ControlClient.run_all``)."""
        for args in commands:
            if args[0] not in COMMANDS:
                raise ControlUnavailable(f"{args[0]} does not go through the kept client")
        with self._lock:
            client = self._clients.get(socket)
            if client is None:
                client = self._clients[socket] = ControlClient(socket)
        return client.run_all(target, commands)

    def close(self) -> None:
        """End every kept client."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
