"""The room's background deliverer: ``agent-room watch --background``, started by
``start`` and ``join`` (for an agent in a pane) and by the console when no deliverer
listens, so that messages are delivered whatever terminal or console is open or quit.

Its own process group, its output in the room's ``watch.log``, its pid in ``watch.pid``
(``cli.background``). It stands by like any other watch while another deliverer holds
the lease, and ends by itself once no agent has been alive in the room for a while (or
the room is gone).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_room.adapters.install import agent_room_command
from agent_room.turn.store.home import open_private, room_home
from agent_room.turn.store.wake import listening

LOG_FILE = "watch.log"
"""Where the background watch's diagnostics go (it has no terminal)."""
LISTEN_WAIT = 3.0
"""How long ``start`` and ``join`` wait for a new background watch to take the lease
(they print what happened and return: a watch slower to start still starts)."""


@dataclass(frozen=True)
class Started:
    """A background watch just started: its pid, and why it did not stay, if it did not."""

    pid: int
    problem: str | None = None


def start_deliverer(environ: Mapping[str, str], *, wait: float = LISTEN_WAIT) -> Started | None:
    """Start ``agent-room watch --background`` for the room unless a deliverer listens
    (None then), and wait up to ``wait`` seconds for it to listen."""
    home = room_home(environ)
    if listening(home):
        return None
    log = open_private(Path(home, LOG_FILE), os.O_WRONLY | os.O_APPEND)
    try:
        proc = subprocess.Popen(
            [*agent_room_command(), "watch", "--background"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env={k: v for k, v in environ.items() if k not in ("TMUX_PANE", "AGENT_ROOM_NAME")},
            start_new_session=True,  # not ended with the terminal or the agent's pane
        )
    finally:
        os.close(log)
    deadline = time.monotonic() + wait
    while not listening(home) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is not None:
        return Started(proc.pid, f"the background deliverer exited at once (see {home}/{LOG_FILE})")
    return Started(proc.pid)
