"""The operator's reach outside the console: tmux popups and messages, the desktop's
notifications, and a command of the user's own.

The notification channels implement ``core.ports.NotifyChannel``; the notifier worker
is given them by the entry point and never knows which it speaks through. Every tmux
command names its server's socket and passes text as one argument after ``--`` or as
an option's value: what agents wrote reaches no shell and no tmux command parser.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence

from agent_room.core.attention import Alert
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.printable import printable

TIMEOUT = 10.0
"""Seconds a channel's command may take before it is given up."""
MESSAGE_LIMIT = 300
"""Characters of a notification shown at most (one line on a status bar)."""


def _tmux(
    socket: str | None, *args: str, timeout: float | None = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    argv = ["tmux", *(["-S", socket] if socket else []), *args]
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
    )


def _one_line(text: str) -> str:
    """Shown, never acted on: escapes for controls, no newlines, capped; ``#`` doubled so
    tmux's format expansion shows it as written."""
    return printable(" ".join(text.split()))[:MESSAGE_LIMIT].replace("#", "##")


def open_popup(
    socket: str | None, command: Sequence[str], *, size: str, cwd: str, client: str | None
) -> int:
    """Run ``command`` in a tmux popup over ``client``'s window (None: the current
    client's, tmux's pick); wait for it."""
    result = _tmux(
        socket, "display-popup", *(["-c", client] if client else []), "-E", "-w", size,
        "-h", size, "-d", cwd, "-T", " agent-room ", "--", *command,
        timeout=None,  # display-popup returns when the popup closes: the operator's time
    )  # fmt: skip
    if result.returncode != 0:
        raise BadInput(f"tmux could not open the popup: {result.stderr.strip() or 'no client'}")
    return 0


class TmuxChannel:
    """Shows each alert on every client of the agents' tmux servers (display-message)
    and refreshes their status lines, so ``#(agent-room status)`` is read again now."""

    name = "tmux"

    def __init__(
        self, sockets: Callable[[], Sequence[str | None]], *, duration_ms: int = 8000
    ) -> None:
        self.sockets = sockets
        """The servers to tell, asked at each send (agents come and go)."""
        self.duration_ms = duration_ms

    def available(self) -> str | None:
        """Why this channel cannot speak here, or None."""
        return None if shutil.which("tmux") else "tmux is not installed"

    def send(self, alerts: Sequence[Alert]) -> None:
        """Tell every attached client; a server that is gone is skipped."""
        for socket in dict.fromkeys(self.sockets()):
            listed = _tmux(socket, "list-clients", "-F", "#{client_name}")
            if listed.returncode != 0:
                continue
            for client in listed.stdout.split():
                for alert in alerts:
                    _tmux(
                        socket, "display-message", "-c", client, "-d", str(self.duration_ms),
                        "--", "agent-room: " + _one_line(alert.text),
                    )  # fmt: skip
                _tmux(socket, "refresh-client", "-S", "-t", client)


class DesktopChannel:
    """The desktop's notifications through ``notify-send`` (libnotify), where present."""

    name = "desktop"

    def __init__(self, program: str = "notify-send") -> None:
        self.program = shutil.which(program)

    def available(self) -> str | None:
        """Why this channel cannot speak here, or None."""
        return None if self.program else "notify-send is not installed (package libnotify-bin)"

    def send(self, alerts: Sequence[Alert]) -> None:
        """One desktop notification per alert."""
        if self.program is None:
            return
        for alert in alerts:
            subprocess.run(
                [self.program, "--app-name=agent-room", "--", f"agent-room: {alert.kind}",
                 printable(alert.text)[:MESSAGE_LIMIT]],
                capture_output=True, timeout=TIMEOUT, check=False, stdin=subprocess.DEVNULL,
            )  # fmt: skip


class CommandChannel:
    """The user's own command, run once per alert without a shell: the alert as JSON on
    its standard input and in ``AGENT_ROOM_ALERT_*`` variables."""

    name = "command"

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)

    def available(self) -> str | None:
        """Why this channel cannot speak here, or None."""
        if not self.argv:
            return "no command is set (notify.command in console.toml)"
        if shutil.which(self.argv[0]) is None:
            return f"the notify command {self.argv[0]!r} is not found"
        return None

    def send(self, alerts: Sequence[Alert]) -> None:
        """Run the command for each alert; a failure is raised with its exit code."""
        for alert in alerts:
            data = {"key": alert.key, "kind": alert.kind, "agent": alert.agent, "text": alert.text}
            env = {
                **os.environ,
                "AGENT_ROOM_ALERT_KIND": alert.kind,
                "AGENT_ROOM_ALERT_AGENT": alert.agent,
                "AGENT_ROOM_ALERT_TEXT": printable(alert.text),
                "AGENT_ROOM_ALERT_KEY": alert.key,
            }
            result = subprocess.run(
                self.argv, input=json.dumps(data) + "\n", text=True, env=env,
                capture_output=True, timeout=TIMEOUT, check=False,
            )  # fmt: skip
            if result.returncode != 0:
                raise RuntimeError(
                    f"the notify command exited {result.returncode}: {result.stderr.strip()[:200]}"
                )
