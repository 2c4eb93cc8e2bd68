"""tmux, through libtmux: the only way anything is typed into an agent's pane.

Rules from checks against real tmux and real agents: target panes by id (``%N``) on the
server the agent registered from; text always with ``send-keys -l --`` (literal, and no
option parsing of the text), made safe by ``core.keys`` first; Enter as its own command
after a settle delay that depends on the agent; multi-line text only as a bracketed
paste from a uniquely named buffer. Whether typing is allowed at all is decided before
any of this is called (see ``Tmux.typing_refusal``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import libtmux

from agent_room.adapters import procfs
from agent_room.core.keys import safe_line, safe_paste
from agent_room.core.names import is_pane_id


@lru_cache(maxsize=32)
def _server(socket_path: str | None) -> Any:
    if socket_path:
        return libtmux.Server(socket_path=socket_path)
    return libtmux.Server()


class TmuxError(RuntimeError):
    """A tmux command failed."""


class Tmux:
    """The multiplexer port over real tmux servers."""

    def _cmd(self, socket: str | None, *args: str, stdin: str | None = None) -> list[str]:
        if stdin is not None:
            import subprocess

            cmd = ["tmux", *(["-S", socket] if socket else []), *args]
            proc = subprocess.run(cmd, input=stdin.encode(), capture_output=True, check=False)
            if proc.returncode:
                raise TmuxError(proc.stderr.decode().strip() or f"tmux {args[0]} failed")
            return proc.stdout.decode().splitlines()
        result = _server(socket).cmd(*args)
        if result.returncode:
            raise TmuxError(" ".join(result.stderr) or f"tmux {args[0]} failed")
        return list(result.stdout)

    def pane_pid(self, socket: str | None, pane: str) -> int | None:
        """The pid of the process the pane started with; None if the pane is gone."""
        try:
            out = self._cmd(socket, "display-message", "-p", "-t", pane, "#{pane_pid}")
        except TmuxError:
            return None
        return int(out[0]) if out and out[0].isdigit() else None

    def typing_refusal(
        self, socket: str | None, pane: str, agent_pid: int | None, agent_start: int | None
    ) -> str | None:
        """Why nothing may be typed into ``pane`` now, or None if the agent is at its prompt.

        The pane must exist and run the registered agent (the agent is the pane's process
        or descends from it), and the agent must own the terminal's foreground: a shell
        prompt, or another program in front, refuses.
        """
        if not is_pane_id(pane):
            return f"not a pane id: {pane!r}"
        if agent_pid is None:
            return "no agent process is registered for the pane"
        pane_pid = self.pane_pid(socket, pane)
        if pane_pid is None:
            return "the pane is gone"
        if not procfs.is_alive(agent_pid, agent_start):
            return "the agent's process is gone"
        lineage = {agent_pid} | {s.pid for s in procfs.ancestors(agent_pid)}
        if pane_pid not in lineage:
            return "the pane does not run the registered agent"
        stat = procfs.read_stat(agent_pid)
        if stat is None or stat.tpgid != stat.pgrp:
            return "the agent is not in the foreground of its terminal"
        if stat.name in procfs.SHELLS:
            return "the pane is at a shell prompt"
        return None

    def type_line(
        self,
        socket: str | None,
        pane: str,
        text: str,
        *,
        settle: float,
        still_safe: Callable[[], bool] | None = None,
    ) -> bool:
        """Type one safe line, then Enter as a separate command after ``settle`` seconds.

        ``still_safe`` is asked again just before Enter: if the agent left the foreground
        meanwhile (it exited to its shell), the line stays unsubmitted. Returns whether
        Enter was sent.
        """
        line = safe_line(text)
        if not line:
            return False
        self._cmd(socket, "send-keys", "-t", pane, "-l", "--", line)
        if settle > 0:
            time.sleep(settle)
        if still_safe is not None and not still_safe():
            return False
        self.press_enter(socket, pane)
        return True

    def press_enter(self, socket: str | None, pane: str) -> None:
        """Submit what is typed."""
        self._cmd(socket, "send-keys", "-t", pane, "Enter")

    def paste(self, socket: str | None, pane: str, text: str) -> None:
        """Paste multi-line text as one bracketed paste from a uniquely named buffer."""
        buffer = f"agent-room-{uuid.uuid4().hex}"
        self._cmd(socket, "load-buffer", "-b", buffer, "-", stdin=safe_paste(text))
        self._cmd(socket, "paste-buffer", "-p", "-d", "-b", buffer, "-t", pane)

    def capture(self, socket: str | None, pane: str) -> str:
        """The pane's visible text."""
        return "\n".join(self._cmd(socket, "capture-pane", "-p", "-t", pane))
