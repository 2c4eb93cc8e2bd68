"""A deliverer in the background: ``start`` and ``join`` make sure one runs for the room.

Without a deliverer a message waits in the room until someone thinks of ``agent-room
watch``. So ``start`` and ``join`` (for an agent in a pane), like the console, start
``agent-room watch --background`` when no deliverer listens (``workers.background``): its
own process group, its output in the room's ``watch.log``, its pid in ``watch.pid``. It
stands by like any other watch while another deliverer holds the lease, ends by itself
once no agent has been alive in the room for a while (or the room is gone), and
``agent-room watch --status`` / ``--stop`` show and end it. ``--no-watch`` or the
``watch`` setting off (``AGENT_ROOM_WATCH=off``, ``config.settings``) opt out.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_room.room.service import Room
from agent_room.turn.core.errors import Refused
from agent_room.turn.core.files import read_regular
from agent_room.turn.procfs import cmdline, is_alive, read_stat
from agent_room.turn.store.attention import room_exists
from agent_room.turn.store.home import open_private, room_home
from agent_room.turn.store.wake import listening
from agent_room.workers.background import start_deliverer
from agent_room.workers.deliverer import delivery_lease

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agent_room.room.service import Room

PID_FILE = "watch.pid"
"""The background watch's pid, start time and command line (JSON), written by itself,
removed on its exit; checked against the running process before any signal."""
PID_FILE_LIMIT = 64 * 1024
"""A pid file larger than this was not written by a watch."""


def ensure_deliverer(environ: Mapping[str, str], *, opted_out: bool = False) -> None:
    """Start a background watch for the room unless a deliverer listens; say which
    (``opted_out``: ``--no-watch``, or the ``watch`` setting off)."""
    if opted_out:
        return
    started = start_deliverer(environ)
    if started is None:
        return
    if started.problem is not None:
        print(f"agent-room: {started.problem}; run agent-room watch", file=sys.stderr)
        return
    print(
        f"a deliverer runs in the background (pid {started.pid};"
        " agent-room watch --status, --stop)",
        file=sys.stderr,
    )


@dataclass(frozen=True)
class WatchProcess:
    """What ``watch.pid`` says of the background watch: who it was when it started."""

    pid: int
    start: int | None
    command: list[str] | None


def write_pid_file(home: str) -> None:
    """Record this process as the room's background watch: pid, start time, command."""
    pid = os.getpid()
    stat = read_stat(pid)
    record = {"pid": pid, "start": stat.start_ticks if stat else None, "command": cmdline(pid)}
    path = Path(home, PID_FILE)
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
    finally:
        os.close(fd)


def remove_pid_file(home: str) -> None:
    """Forget this process as the room's background watch (if it still is the one)."""
    found = _read_pid_file(home)
    if found is not None and found.pid == os.getpid():
        Path(home, PID_FILE).unlink(missing_ok=True)


def _read_pid_file(home: str) -> WatchProcess | None:
    """``watch.pid`` as written (read without blocking or following a link); None if
    there is none or it names no process at all."""
    try:
        raw = read_regular(Path(home, PID_FILE), PID_FILE_LIMIT, follow=False)
    except OSError:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        words = raw.split()  # an older watch's ``PID START_TICKS``: no command to check
        pid = int(words[0]) if words and words[0].isdigit() else None
        start = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        return WatchProcess(pid, start, None) if pid else None
    if not isinstance(data.get("pid"), int) or data["pid"] <= 0:
        return None
    start = data.get("start")
    command = data.get("command")
    return WatchProcess(
        data["pid"],
        start if isinstance(start, int) else None,
        command if isinstance(command, list) and all(isinstance(a, str) for a in command) else None,
    )


def watch_refusal(found: WatchProcess) -> str | None:
    """Why the process ``watch.pid`` names is not to be signalled as the room's watch
    (None: it is the very process that wrote the file)."""
    missing = [w for w, v in (("start time", found.start), ("command", found.command)) if not v]
    if missing:
        return (
            f"{PID_FILE} names pid {found.pid} without its {' and '.join(missing)}: not signalled"
        )
    if not is_alive(found.pid, found.start):
        return f"{PID_FILE} names pid {found.pid}, which no longer runs (or is another process)"
    if cmdline(found.pid) != found.command:
        return f"{PID_FILE} names pid {found.pid}, which runs another command: not signalled"
    return None


def background_pid(home: str) -> int | None:
    """The room's background watch, if its process is still the one that wrote the file."""
    found = _read_pid_file(home)
    return found.pid if found is not None and watch_refusal(found) is None else None


def idle(room: Room) -> bool:
    """Whether no agent is alive in the room (or the room is gone): a session with a
    live process, or one joined by hand in a pane and not ended."""
    if not Path(room.home).is_dir():
        return True
    return not any((row["pid"] or row["pane"]) and row["state"] != "ended" for row in room.who())


def cmd_watch_status() -> int:
    """Say which process delivers for the room: 0 if one does, 1 if none."""
    home = room_home(os.environ)
    background = background_pid(home)
    holder = None
    if room_exists(home):
        room = Room.open(os.environ)
        try:
            row = room.store.lease(delivery_lease(room))
        finally:
            room.close()
        if row and row["pid"] and is_alive(int(row["pid"]), row["pid_start"]):
            holder = int(row["pid"])
    if holder is None and not listening(home):
        print("no deliverer is running: messages wait (agent-room watch, or the console)")
        return 1
    where = "the background watch" if holder == background else "agent-room watch or a console"
    print(f"deliverer: pid {holder} ({where})" if holder else "deliverer: running")
    if background is not None and background != holder:
        print(f"background watch: pid {background} (standing by)")
    if background is not None:
        print("stop the background watch: agent-room watch --stop")
    return 0


def cmd_watch_stop() -> int:
    """End the room's background watch (SIGTERM); others are left alone, and so is any
    process the pid file names that is not the watch which wrote it."""
    home = room_home(os.environ)
    found = _read_pid_file(home)
    if found is None:
        print("no background watch is running for this room", file=sys.stderr)
        return 0
    refusal = watch_refusal(found)
    if refusal is not None:
        if is_alive(found.pid, found.start if found.command else None):
            raise Refused(f"{refusal}; remove {Path(home, PID_FILE)} if no watch runs")
        print(f"no background watch is running for this room ({refusal})", file=sys.stderr)
        return 0
    os.kill(found.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10.0
    while background_pid(home) == found.pid and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"stopped the background watch (pid {found.pid})", file=sys.stderr)
    return 0
