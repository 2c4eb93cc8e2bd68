"""Watching panes for the delivery benchmark: a private tmux server and a control-mode
client that timestamps every byte a pane prints as tmux reads it (``%output``)."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    stop_process,
)

SESSION = "bench"
"""The benchmark's tmux session."""
QUIET = 0.03
"""A pane counts as settled after this long without output."""


def perf() -> float:
    return time.perf_counter()


# -- tmux: a private server and a control-mode client --------------------------------


class TmuxServer:
    """A private tmux server (``tmux -L NAME``), ended by its socket when done."""

    def __init__(self, env: dict[str, str]) -> None:
        self.name = f"agent-room-bench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.env = env
        self.argv = ["tmux", "-L", self.name, "-f", "/dev/null"]
        self.socket_path = ""
        self.pid = 0
        """The server's process, once started."""

    def run(self, *args: str) -> str:
        proc = subprocess.run(
            [*self.argv, *args], env=self.env, capture_output=True, check=False, text=True
        )
        if proc.returncode:
            raise RuntimeError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout.strip()

    def start(self, command: str) -> str:
        """Start the server with one session running ``command``; return its pane id."""
        pane = self.run(
            "new-session", "-d", "-s", SESSION, "-x", "200", "-y", "50", "-n", "ours",
            "-P", "-F", "#{pane_id}", command,
        )  # fmt: skip
        self.socket_path = self.run("display-message", "-p", "-t", pane, "#{socket_path}")
        self.pid = int(self.run("display-message", "-p", "-t", pane, "#{pid}"))
        return pane

    def new_window(self, name: str, command: str) -> str:
        return self.run(
            "new-window", "-d", "-t", SESSION, "-n", name, "-P", "-F", "#{pane_id}", command
        )

    def kill(self) -> None:
        """End the server; one still running after ``kill-server`` (seen after a storm of
        50 panes and a console: waiting on a job's pipe) is killed by its pid, once its
        command line shows it is this server."""
        subprocess.run([*self.argv, "kill-server"], env=self.env, capture_output=True, check=False)
        deadline = perf() + 5.0
        while self.pid and self._alive() and perf() < deadline:
            time.sleep(0.05)
        if self.pid and self._alive():
            with suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        if self.socket_path:  # tmux may leave its socket file behind
            with suppress(OSError):
                Path(self.socket_path).unlink()

    def _alive(self) -> bool:
        """This server's process still runs (not another one under a reused pid)."""
        try:
            command = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return False
        return self.name.encode() in command


_ESCAPED = re.compile(rb"\\([0-7]{3})")


def unescape(data: bytes) -> bytes:
    """Control mode's ``%output`` data: bytes below 32 and ``\\`` come as octal escapes."""
    return _ESCAPED.sub(lambda m: bytes([int(m[1], 8)]), data)


@dataclass
class PaneStream:
    """Everything a pane printed since the control client attached."""

    data: bytearray = field(default_factory=bytearray)
    last_at: float = 0.0
    """When tmux last sent output of this pane (``perf_counter``)."""
    mark: int = 0
    """Where the current message's output starts."""

    def new(self) -> bytes:
        return bytes(self.data[self.mark :])


@dataclass
class Spawned:
    """A timed process whose stdout the event loop reads (EOF = it exited)."""

    proc: subprocess.Popen[bytes]
    started: float
    out: bytearray = field(default_factory=bytearray)
    exited: float | None = None


class Control:
    """A tmux control-mode client: every pane's output as tmux reads it, and commands.

    One ``select`` loop serves it and the stdout pipes of the timed processes, so a
    timestamp is taken when the data arrives, not when somebody looks.
    """

    def __init__(self, server: TmuxServer, session: str) -> None:
        self.proc = subprocess.Popen(
            [*server.argv, "-C", "attach-session", "-t", session],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=server.env,
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.panes: dict[str, PaneStream] = {}
        self.spawned: dict[int, Spawned] = {}
        self._partial = b""
        self._block: list[bytes] | None = None
        self._tag = b""
        self._replies: deque[tuple[bool, list[bytes]]] = deque()
        self._reply(timeout=10.0)  # attach-session's own reply

    def pane(self, pane_id: str) -> PaneStream:
        return self.panes.setdefault(pane_id, PaneStream())

    def close(self) -> None:
        with suppress(OSError):
            self.stdin.close()
        stop_process(self.proc, timeout=5.0)

    # the event loop

    def pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` for output of tmux or a timed process; take it in."""
        fds = [self.fd, *self.spawned]
        ready, _, _ = select.select(fds, [], [], max(timeout, 0.0))
        now = perf()
        for fd in ready:
            if fd == self.fd:
                self._read(now)
            else:
                self._read_spawned(fd, now)

    def _read(self, now: float) -> None:
        chunks = []
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                raise RuntimeError("the tmux control client exited")
            chunks.append(chunk)
        lines = (self._partial + b"".join(chunks)).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line, now)

    def _line(self, line: bytes, now: float) -> None:
        if self._block is not None:
            parts = line.split(b" ")
            if parts[0] in (b"%end", b"%error") and parts[2:3] == [self._tag]:
                self._replies.append((parts[0] == b"%end", self._block))
                self._block = None
            else:
                self._block.append(line)
        elif line.startswith(b"%begin "):
            self._block = []
            self._tag = line.split(b" ")[2]
        elif line.startswith(b"%output "):
            parts = line.split(b" ", 2)
            stream = self.pane(parts[1].decode())
            stream.data += unescape(parts[2] if len(parts) > 2 else b"")
            stream.last_at = now
        elif line.startswith(b"%exit"):
            raise RuntimeError(f"the tmux control client was detached: {line!r}")

    def _read_spawned(self, fd: int, now: float) -> None:
        spawned = self.spawned[fd]
        chunk = os.read(fd, 1 << 16)
        if chunk:
            spawned.out += chunk
            return
        spawned.exited = now
        del self.spawned[fd]
        spawned.proc.wait()

    def spawn(self, argv: Sequence[str], env: dict[str, str]) -> Spawned:
        """Start a timed process now; the loop notes when it exits."""
        started = perf()
        proc = subprocess.Popen(
            list(argv),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None
        spawned = Spawned(proc, started)
        fd = proc.stdout.fileno()
        os.set_blocking(fd, False)
        self.spawned[fd] = spawned
        return spawned

    def wait(
        self, check: Callable[[], Any], *, timeout: float, what: str, step: float = 0.005
    ) -> Any:
        """Serve the loop until ``check`` returns something truthy; return it."""
        deadline = perf() + timeout
        while True:
            value = check()
            if value:
                return value
            left = deadline - perf()
            if left <= 0:
                raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
            self.pump(min(step, left))

    def wait_exit(self, spawned: Spawned, *, timeout: float = 30.0) -> float:
        self.wait(lambda: spawned.exited is not None, timeout=timeout, what="a process to exit")
        assert spawned.exited is not None
        if spawned.proc.returncode:
            err = spawned.proc.stderr.read().decode() if spawned.proc.stderr else ""
            raise RuntimeError(
                f"{' '.join(map(str, spawned.proc.args))} exited"  # type: ignore[arg-type]
                f" {spawned.proc.returncode}: {err.strip()}"
            )
        if spawned.proc.stderr is not None:
            spawned.proc.stderr.close()
        return spawned.exited - spawned.started

    def wait_quiet(self, pane: str, quiet: float = QUIET, *, timeout: float = 10.0) -> None:
        """Until the pane printed nothing for ``quiet`` seconds."""
        stream = self.pane(pane)
        self.wait(
            lambda: perf() - stream.last_at >= quiet, timeout=timeout, what=f"{pane} to go quiet"
        )

    # commands

    def _reply(self, timeout: float) -> list[bytes]:
        self.wait(lambda: self._replies, timeout=timeout, what="a tmux reply", step=0.05)
        ok, lines = self._replies.popleft()
        if not ok:
            raise RuntimeError(f"tmux: {b' '.join(lines).decode(errors='replace')}")
        return lines

    def command(self, *args: str, timeout: float = 10.0) -> list[bytes]:
        """Run a tmux command through the control client; return its output lines."""
        self.stdin.write(" ".join(args).encode() + b"\n")
        self.stdin.flush()
        return self._reply(timeout)

    def clear(self, pane: str) -> PaneStream:
        """Clear the pane's history and start a new message's output."""
        self.command("clear-history", "-t", pane)
        stream = self.pane(pane)
        stream.mark = len(stream.data)
        return stream

    def screen(self, pane: str) -> bytes:
        """The pane's text with its history, wrapped lines joined."""
        return b"\n".join(self.command("capture-pane", "-p", "-J", "-S", "-", "-t", pane))
