"""tmux, through libtmux: the only way anything is typed into an agent's pane.

Rules from checks against real tmux and real agents: target panes by id (``%N``) on the
server the agent registered from; text always with ``send-keys -l --`` (literal, and no
option parsing of the text), made safe by ``core.keys`` first; Enter as its own command
after a settle delay that depends on the agent; multi-line text only as a bracketed
paste from a uniquely named buffer. Whether typing is allowed at all is decided before
any of this is called (see ``Tmux.typing_refusal``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from agent_room.adapters.tmux_control import ControlClients, ControlUnavailable
from agent_room.core.enter import ATTACH_PAUSE
from agent_room.core.keys import safe_line, safe_paste
from agent_room.turn import procfs
from agent_room.turn.core.errors import PaneUnavailable
from agent_room.turn.core.names import is_pane_id

_IMPORT_LOCK = threading.Lock()
_CLEAR_KEY = re.compile(r"C-[a-z]")
"""The keys ``type_line`` may press to empty an input line: ctrl and a letter."""


def _libtmux() -> Any:
    """libtmux, imported on first use rather than with this module (the console paints
    first). libtmux reads ``sys.stdout.encoding`` when imported, and inside a running
    Textual app ``sys.stdout`` is a capture object without one: the process's real
    stdout stands in for the length of the import."""
    with _IMPORT_LOCK:
        if "libtmux" not in sys.modules and not hasattr(sys.stdout, "encoding"):
            with redirect_stdout(sys.__stdout__):
                import libtmux  # noqa: PLC0415 - see the docstring
        import libtmux  # noqa: PLC0415 - see the docstring
    return libtmux


@lru_cache(maxsize=32)
def _server(socket_path: str | None) -> Any:
    libtmux = _libtmux()
    if socket_path:
        return libtmux.Server(socket_path=socket_path)
    return libtmux.Server()


class TmuxError(PaneUnavailable):
    """A tmux command failed: the pane or its server is gone."""


class PaneFacts(NamedTuple):
    """What never changes while a pane lives: its first process and its terminal."""

    pid: int
    tty: int
    """The pane's terminal as a device number, comparable with ``ProcStat.tty_nr``."""


def user_client(socket: str | None, caller: str | None) -> str | None:
    """The user's terminal that shows the pane ``caller`` (``$TMUX_PANE``), for a command
    on "the current client" (``switch-client``, ``display-popup``): tmux's own choice,
    but never a control-mode client. A kept client (this process's or a deliverer's)
    attached to the same session and more recently active would otherwise be the one
    acted on, and the user's terminal would not change. None: leave it to tmux."""
    server = _server(socket)
    session = ""
    if caller and is_pane_id(caller):
        found = server.cmd("display-message", "-p", "-t", caller, "#{session_id}")
        session = found.stdout[0] if not found.returncode and found.stdout else ""
    listed = server.cmd(
        "list-clients",
        "-F",
        "#{client_control_mode} #{client_activity} #{session_id} #{client_name}",
    )
    best: tuple[bool, int, str] | None = None
    for line in listed.stdout if not listed.returncode else []:
        control, activity, client_session, name = [*line.split(" ", 3), "", "", ""][:4]
        if control != "0" or not name or not activity.isdigit():
            continue
        rank = (client_session == session, int(activity), name)
        best = rank if best is None or rank > best else best
    return best[2] if best else None


class Tmux:
    """The multiplexer port over real tmux servers.

    Pane facts are cached: a pane's first process and terminal are fixed for its life, so
    the check before each nudge reads only ``/proc``, and the nudge itself is the one tmux
    command on the way to the agent. A cached pane that no longer matches is looked up
    again before anything is refused or typed. Commands on a pane go through a kept
    control-mode client per server (``tmux_control``), a tmux process only when it cannot.
    """

    def __init__(self) -> None:
        self._panes: dict[tuple[str | None, str], PaneFacts] = {}
        self._control = ControlClients()

    def close(self) -> None:
        """End the kept clients (they also end on their own when this process does)."""
        self._control.close()

    def _cmd(self, socket: str | None, *args: str, stdin: str | None = None) -> list[str]:
        if stdin is None and "-t" in args:
            try:
                ok, out = self._control.run(socket, args[args.index("-t") + 1], *args)
            except ControlUnavailable:
                pass  # a tmux process below
            else:
                if not ok:
                    self.forget(socket, args[args.index("-t") + 1])
                    raise TmuxError(" ".join(out) or f"tmux {args[0]} failed")
                return out
        if stdin is not None:
            cmd = ["tmux", *(["-S", socket] if socket else []), *args]
            proc = subprocess.run(cmd, input=stdin.encode(), capture_output=True, check=False)
            if proc.returncode:
                raise TmuxError(proc.stderr.decode().strip() or f"tmux {args[0]} failed")
            return proc.stdout.decode().splitlines()
        result = _server(socket).cmd(*args)
        if result.returncode:
            if "-t" in args:  # what is cached about the target may be what failed
                self.forget(socket, args[args.index("-t") + 1])
            raise TmuxError(" ".join(result.stderr) or f"tmux {args[0]} failed")
        return list(result.stdout)

    def _cmds(self, socket: str | None, pane: str, *commands: Sequence[str]) -> None:
        """Commands on ``pane`` written to the kept client at once (tmux and this thread
        wake once for all of them), else run one by one; the first refused raises."""
        try:
            answers = self._control.run_all(socket, pane, commands)
        except ControlUnavailable:
            for command in commands:
                self._cmd(socket, *command)
            return
        for (ok, out), command in zip(answers, commands, strict=True):
            if not ok:
                self.forget(socket, pane)
                raise TmuxError(" ".join(out) or f"tmux {command[0]} failed")

    def pane_facts(self, socket: str | None, pane: str, *, fresh: bool = False) -> PaneFacts | None:
        """The pane's first process and terminal; None if the pane is gone."""
        key = (socket, pane)
        if not fresh and key in self._panes:
            return self._panes[key]
        self._panes.pop(key, None)
        try:
            out = self._cmd(socket, "display-message", "-p", "-t", pane, "#{pane_pid} #{pane_tty}")
        except TmuxError:
            return None
        pid, _, tty = (out[0] if out else "").partition(" ")
        if not pid.isdigit() or not tty:
            return None
        try:
            rdev = Path(tty).stat().st_rdev
        except OSError:
            return None
        facts = self._panes[key] = PaneFacts(int(pid), rdev)
        return facts

    def pane_pid(self, socket: str | None, pane: str) -> int | None:
        """The pid of the process the pane started with; None if the pane is gone."""
        facts = self.pane_facts(socket, pane)
        return facts.pid if facts else None

    def forget(self, socket: str | None, pane: str) -> None:
        """Drop what is cached about a pane (it failed a command)."""
        self._panes.pop((socket, pane), None)

    def typing_refusal(
        self, socket: str | None, pane: str, agent_pid: int | None, agent_start: int | None
    ) -> str | None:
        """Why nothing may be typed into ``pane`` now, or None if the agent is at its prompt.

        The pane must exist and run the registered agent (the agent is the pane's process
        or descends from it, on the pane's terminal), and the agent must own the terminal's
        foreground: a shell prompt, or another program in front, refuses.
        """
        if not is_pane_id(pane):
            return f"not a pane id: {pane!r}"
        if agent_pid is None:
            return "no agent process is registered for the pane"
        if not procfs.is_alive(agent_pid, agent_start):
            return "the agent's process is gone"
        refusal = self._pane_refusal(self.pane_facts(socket, pane), agent_pid)
        if refusal is not None:  # perhaps cached facts of an earlier server: look again
            refusal = self._pane_refusal(self.pane_facts(socket, pane, fresh=True), agent_pid)
        if refusal is not None:
            return refusal
        stat = procfs.read_stat(agent_pid)
        if stat is None or stat.tpgid != stat.pgrp:
            return "the agent is not in the foreground of its terminal"
        if stat.name in procfs.SHELLS:
            return "the pane is at a shell prompt"
        return None

    @staticmethod
    def _pane_refusal(facts: PaneFacts | None, agent_pid: int) -> str | None:
        if facts is None:
            return "the pane is gone"
        stat = procfs.read_stat(agent_pid)
        if stat is None or stat.tty_nr != facts.tty:
            return "the agent does not run on the pane's terminal"
        lineage = {agent_pid} | {s.pid for s in procfs.ancestors(agent_pid)}
        if facts.pid not in lineage:
            return "the pane does not run the registered agent"
        return None

    def type_line(
        self,
        socket: str | None,
        pane: str,
        text: str,
        *,
        settle: float,
        still_safe: Callable[[], bool] | None = None,
        clear: Sequence[str] = (),
    ) -> bool:
        """Type one safe line, then Enter as a separate command after ``settle`` seconds.

        ``clear`` are the keys that empty the agent's input line first (plain control
        keys only, never text). ``still_safe`` is asked again just before Enter: if the
        agent left the foreground meanwhile (it exited to its shell), the line stays
        unsubmitted. Returns whether Enter was sent.
        """
        line = safe_line(text)
        if not line:
            return False
        if any(_CLEAR_KEY.fullmatch(key) is None for key in clear):
            raise ValueError(f"not a line-editing key: {clear!r}")
        typing = ("send-keys", "-t", pane, "-l", "--", line)
        self._cmds(socket, pane, *([("send-keys", "-t", pane, *clear)] if clear else []), typing)
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

    # -- entering agents: switch, attach, open a window --------------------------------

    def pane_exists(self, socket: str | None, pane: str) -> bool:
        """Whether the pane is still there."""
        return is_pane_id(pane) and self.pane_pid(socket, pane) is not None

    def _select(self, socket: str | None, pane: str) -> None:
        self._cmd(socket, "select-window", "-t", pane)
        self._cmd(socket, "select-pane", "-t", pane)

    def switch_client(self, socket: str | None, pane: str) -> None:
        """Make ``pane`` current in its window and session, and show that session in the
        user's terminal the caller runs in (``user_client``)."""
        if not is_pane_id(pane):
            raise TmuxError(f"not a pane id: {pane!r}")
        self._select(socket, pane)
        client = user_client(socket, os.environ.get("TMUX_PANE"))
        self._cmd(socket, "switch-client", *(["-c", client] if client else []), "-t", pane)

    def attach(self, socket: str | None, pane: str) -> int:
        """Attach this terminal to the pane's session until the user detaches.

        Runs ``tmux attach-session`` on the caller's terminal (the console suspends
        around it); ``$TMUX`` is dropped so that tmux does not refuse to nest.
        """
        if not is_pane_id(pane):
            raise TmuxError(f"not a pane id: {pane!r}")
        self._select(socket, pane)
        env = {k: v for k, v in os.environ.items() if k != "TMUX"}
        cmd = ["tmux", *(["-S", socket] if socket else []), "attach-session", "-t", pane]
        time.sleep(ATTACH_PAUSE)  # what the caller said reaches the terminal before tmux
        return subprocess.run(cmd, env=env, check=False).returncode

    def detach_client(self, socket: str | None, tty: str) -> None:
        """Detach the client on ``tty``, if one of this server's clients is there."""
        server = _server(socket)  # a tty is no pane: not through the kept client
        if tty not in server.cmd("list-clients", "-F", "#{client_tty}").stdout:
            raise TmuxError(f"no tmux client is attached from {tty} any more")
        server.cmd("detach-client", "-t", tty)

    def open_window(
        self, socket: str | None, cwd: str | None, argv: tuple[str, ...], *, name: str, inside: bool
    ) -> str:
        """Start ``argv`` as the initial command of a new window (when the caller is inside
        tmux) or a new detached session named ``name``; return the new pane's id."""
        where = ["-c", cwd] if cwd else []
        if inside:
            out = self._cmd(
                socket, "new-window", "-d", "-n", name, *where, "-P", "-F", "#{pane_id}",
                "--", *argv,
            )  # fmt: skip
        else:
            out = self._cmd(
                socket, "new-session", "-d", "-s", name, *where, "-P", "-F", "#{pane_id}",
                "--", *argv,
            )  # fmt: skip
        if not out or not is_pane_id(out[0].strip()):
            raise TmuxError(f"tmux did not report the new pane of {name}")
        return out[0].strip()
