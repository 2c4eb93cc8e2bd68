"""Process facts from ``/proc``: start time, parent, name, liveness.

Standard library only, because the hook reads these on every turn (psutil costs 30 ms
to import). A process's identity is ``(pid, start ticks)``: PIDs are reused, and a
zombie still answers ``kill(pid, 0)``, so liveness compares the recorded start time.
On systems without ``/proc`` the psutil fallback in ``processes.py`` answers instead.
"""

from __future__ import annotations

import os

from agent_room.turn.core.records import Record

PROC = "/proc"

SHELLS = frozenset(
    {
        "sh",
        "bash",
        "dash",
        "zsh",
        "fish",
        "ksh",
        "env",
        "timeout",
        "agent-room-hook",
        "agent-room",
        "nice",
        "nohup",
        "setsid",
        "sudo",
        "time",
        "uv",
        "npx",
        "tmux",
    }
)
"""Wrappers between an agent and its hook: never the agent itself."""


class ProcStat(Record):
    """The fields of ``/proc/PID/stat`` the room needs."""

    __slots__ = ("name", "pgrp", "pid", "ppid", "start_ticks", "state", "tpgid", "tty_nr")

    pid: int
    name: str
    state: str
    ppid: int
    pgrp: int
    tpgid: int
    start_ticks: int
    tty_nr: int
    """The controlling terminal's device number (0 for none), as ``os.stat().st_rdev``."""


def _stat_line(pid: int, proc: str) -> bytes | None:
    """One process's stat line; ``None`` if it is gone or unreadable."""
    return _proc_file(pid, "stat", proc, 4096)


def _proc_file(pid: int, name: str, proc: str, size: int) -> bytes | None:
    """``/proc/PID/NAME`` (its first ``size`` bytes); ``None`` if the process is gone or
    the file unreadable. Read with ``os`` alone: a file object costs more than the read
    (``who`` checks every session)."""
    try:
        fd = os.open(f"{proc}/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def environ_value(pid: int, name: str, proc: str = PROC) -> str | None:
    """``name`` in the environment process ``pid`` started with (None if unset or the
    process is not ours to read); read without blocking and at most 1 MB."""
    try:
        fd = os.open(os.path.join(proc, str(pid), "environ"), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        raw = os.read(fd, 1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)
    prefix = name.encode() + b"="
    for item in raw.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode(errors="replace")
    return None


def read_stat(pid: int, proc: str = PROC) -> ProcStat | None:
    """Read one process's stat line; ``None`` if it is gone or unreadable."""
    raw = _stat_line(pid, proc)
    if raw is None:
        return None
    # the name sits in parentheses and may itself contain spaces or parentheses
    open_at, close_at = raw.find(b"("), raw.rfind(b")")
    if open_at < 0 or close_at < 0:
        return None
    name = raw[open_at + 1 : close_at].decode("utf-8", "replace")
    fields = raw[close_at + 2 :].split()
    try:
        return ProcStat(
            pid=pid,
            name=name,
            state=fields[0].decode(),
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            tpgid=int(fields[5]),
            tty_nr=int(fields[4]),
            start_ticks=int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def is_alive(pid: int, start_ticks: int | None, proc: str = PROC) -> bool:
    """Whether the process that started at ``start_ticks`` still runs (zombies do not).
    Reads only the state and the start time (no ``ProcStat``: half the cost per check)."""
    raw = _stat_line(pid, proc)
    if raw is None:
        return False
    fields = raw[raw.rfind(b")") + 2 :].split(None, 20)
    try:
        state, started = fields[0], int(fields[19])
    except (IndexError, ValueError):
        return False
    if state in (b"Z", b"X"):
        return False
    return start_ticks is None or started == start_ticks


def real_uid(pid: int, proc: str = PROC) -> int | None:
    """The real user id ``pid`` runs as (``Uid:`` in ``/proc/PID/status``); ``None`` if it
    is gone or unreadable. A registry entry counts only for a process of the room's own
    user: a planted file naming another user's process is not an agent of this room."""
    raw = _proc_file(pid, "status", proc, 16384)
    for line in (raw or b"").split(b"\n"):
        if line.startswith(b"Uid:"):
            fields = line.split()
            return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None
    return None


def cmdline(pid: int, proc: str = PROC) -> list[str] | None:
    """The arguments ``pid`` was started with; ``None`` if it is gone or unreadable."""
    raw = _proc_file(pid, "cmdline", proc, 1 << 16)
    if raw is None:
        return None
    return [arg.decode("utf-8", "surrogateescape") for arg in raw.split(b"\0")[:-1]]


def ancestors(pid: int, proc: str = PROC, limit: int = 64) -> list[ProcStat]:
    """``pid``'s parent chain, nearest first, ending before PID 1."""
    chain: list[ProcStat] = []
    stat = read_stat(pid, proc)
    while stat is not None and stat.ppid > 1 and len(chain) < limit:
        stat = read_stat(stat.ppid, proc)
        if stat is not None:
            chain.append(stat)
    return chain


def agent_process(hook_pid: int, proc: str = PROC) -> ProcStat | None:
    """The agent a hook runs for: its nearest ancestor that is not a shell or wrapper."""
    for stat in ancestors(hook_pid, proc):
        if stat.name not in SHELLS:
            return stat
    return None
