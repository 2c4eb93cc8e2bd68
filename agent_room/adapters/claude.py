"""Claude Code run headless: ``claude -p --output-format json`` in a repository.

stdin is closed for the client: given an inherited pipe or a terminal it waits for more
input, which is why the seed's ``response=$(claude -p ...)`` hung. Its output goes to
pipes of this process, so ``agent-room ask`` behaves the same captured, redirected or in
a pipe. The client runs in a process group of its own, so that a timeout (or Ctrl-C)
ends it with every tool process it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent_room.turn.core.errors import RoomError

GRACE = 3.0
"""Seconds the client gets to exit after SIGTERM before SIGKILL."""


class ClientMissing(RoomError):
    """The client program cannot be run."""


@dataclass(frozen=True, slots=True)
class Run:
    """What one run left behind; ``returncode`` None when it was ended for time."""

    returncode: int | None
    stdout: str
    stderr: str


class Headless:
    """A client program run headless: its binary, what every run gets, its environment."""

    def __init__(
        self, binary: str, *, args: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> None:
        self.binary = binary
        self.args = tuple(args)
        """Arguments every run gets (the room's plugin or hooks, allowed tools, trust)."""
        self.env = dict(env) if env is not None else None


class ClaudeHeadless(Headless):
    """A ``HeadlessClient`` over the Claude Code CLI."""

    def argv(self, prompt: str, *, resume: str | None, max_turns: int) -> list[str]:
        """The command line of one ask (the prompt last, after ``--``)."""
        argv = [self.binary, "-p", "--output-format", "json", "--max-turns", str(max_turns)]
        argv += self.args
        if resume:
            argv += ["--resume", resume]
        return [*argv, "--", prompt]

    def run(
        self, cwd: str, prompt: str, *, resume: str | None, max_turns: int, timeout: float
    ) -> Run:
        """Ask once; on ``timeout`` end the client's whole process group."""
        returncode, out, err = run_headless(
            self.argv(prompt, resume=resume, max_turns=max_turns),
            cwd=cwd,
            env=self.env,
            timeout=timeout,
            install="install Claude Code or set AGENT_ROOM_CLAUDE",
        )
        return Run(returncode, out.decode(errors="replace"), err.decode(errors="replace"))


def run_headless(
    argv: list[str], *, cwd: str, env: dict[str, str] | None, timeout: float, install: str
) -> tuple[int | None, bytes, bytes]:
    """Run a client with stdin closed in a process group of its own; on ``timeout`` (or
    Ctrl-C) end the group. The return code (None when ended for time) and what it printed;
    ``install`` says in the error how to get the client when it cannot be run."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise ClientMissing(
            f"cannot run the client {argv[0]}: {exc.strerror or exc} ({install})"
        ) from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = _end(proc)
        return None, out, err
    except BaseException:  # Ctrl-C: the client's group goes with us
        _end(proc)
        raise
    return proc.returncode, out, err


def _end(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Stop the process group of ``proc``: SIGTERM, then SIGKILL after the grace; what
    it printed (nothing if an escaped grandchild still holds its pipes)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            return proc.communicate(timeout=GRACE)
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
    return b"", b""
