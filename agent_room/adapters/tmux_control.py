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

Arguments are quoted for tmux's own command parser: single quotes (nothing inside them is
expanded, and ``;`` stays text), a single quote itself as ``\\'`` outside them. A newline
could never be quoted, so an argument with a control character is refused here (the
typed text is made safe before it gets this far).
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
import time
import weakref
from collections.abc import Callable

TIMEOUT = 2.0
"""Seconds to wait for an answer before the client is given up."""
RETRY_AFTER = 5.0
"""Seconds before a client that failed to start is tried again for the same server."""
COMMANDS = frozenset({"send-keys", "display-message", "capture-pane"})
"""What may go through the kept client: commands on an explicit ``-t`` pane only."""


class ControlUnavailable(Exception):
    """The kept client cannot run this command: run a tmux process instead."""


def quote(arg: str) -> str:
    """``arg`` as one token of tmux's command language, taken literally."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in arg):
        raise ControlUnavailable("a control character cannot be quoted on a command line")
    return "'" + arg.replace("'", "'\\''") + "'"


class ControlClient:
    """One ``tmux -C attach`` on one server, started on first use.

    Commands are written one at a time under a lock; a reader thread collects each
    answer (tmux never interleaves its notifications with a command's output) and drops
    the notifications, so the pipe never fills while nothing is asked.
    """

    def __init__(self, socket: str | None) -> None:
        self.socket = socket
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._end: Callable[[], object] = lambda: None
        """Ends the running client, once (a ``weakref.finalize``)."""
        self._answers: queue.Queue[tuple[bool, list[str]] | None] = queue.Queue()
        self._failed_at: float | None = None

    def run(self, target: str, *args: str) -> tuple[bool, list[str]]:
        """Run one command; (ok, output lines). ``target`` is a pane the client may
        attach to if it is not running yet. Raises ``ControlUnavailable`` to fall back."""
        line = " ".join(quote(a) for a in args).encode() + b"\n"
        with self._lock:
            proc = self._running(target)
            try:
                assert proc.stdin is not None
                proc.stdin.write(line)
                proc.stdin.flush()
                answer = self._answers.get(timeout=TIMEOUT)
            except (OSError, queue.Empty):
                answer = None
            if answer is None:  # it died or hangs: never wait on it again
                self._stop()
                raise ControlUnavailable("the control client did not answer")
            return answer

    def close(self) -> None:
        """End the client (by its own pid)."""
        with self._lock:
            self._stop()

    def _running(self, target: str) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stop()
        if self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER:
            raise ControlUnavailable("the control client failed to start a moment ago")
        try:
            return self._start(target)
        except (OSError, ControlUnavailable):
            self._failed_at = time.monotonic()
            self._stop()
            raise ControlUnavailable("the control client did not start") from None

    def _start(self, target: str) -> subprocess.Popen[bytes]:
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
        self._proc = proc
        self._end = weakref.finalize(self, _end, proc)  # also run at exit
        self._answers = queue.Queue()
        threading.Thread(
            target=_read_answers,
            args=(proc, self._answers),
            name="agent-room-tmux-control",
            daemon=True,
        ).start()
        try:  # the attach itself is answered first
            first = self._answers.get(timeout=TIMEOUT)
        except queue.Empty:
            first = None
        if first is None or not first[0]:
            raise ControlUnavailable("tmux did not attach the control client")
        self._failed_at = None
        return proc

    def _stop(self) -> None:
        self._proc = None
        self._end()


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End a kept client: its input closed, it detaches once tmux has written out what it
    had queued (read meanwhile by its reader thread); killed if it does not."""
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
    if proc.stdout is not None:
        with contextlib.suppress(OSError):
            proc.stdout.close()


def _read_answers(
    proc: subprocess.Popen[bytes], answers: queue.Queue[tuple[bool, list[str]] | None]
) -> None:
    """Each command's answer onto ``answers``; None when the client has gone."""
    out = proc.stdout
    assert out is not None
    guard: bytes | None = None
    lines: list[str] = []
    try:
        for raw in out:
            line = raw.rstrip(b"\n")
            if guard is None:
                if line.startswith(b"%begin "):
                    guard, lines = line.split(b" ", 1)[1], []
                continue  # a notification between answers
            if line.startswith((b"%end ", b"%error ")) and line.split(b" ", 1)[1] == guard:
                answers.put((line.startswith(b"%end "), lines))
                guard = None
            else:
                lines.append(line.decode(errors="replace"))
    except (OSError, ValueError):
        pass
    answers.put(None)


class ControlClients:
    """The kept clients of one process, one per server socket."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[str | None, ControlClient] = {}

    def run(self, socket: str | None, target: str, *args: str) -> tuple[bool, list[str]]:
        """Run ``args`` through the server's kept client (see ``ControlClient.run``)."""
        if args[0] not in COMMANDS:
            raise ControlUnavailable(f"{args[0]} does not go through the kept client")
        with self._lock:
            client = self._clients.get(socket)
            if client is None:
                client = self._clients[socket] = ControlClient(socket)
        return client.run(target, *args)

    def close(self) -> None:
        """End every kept client."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
