"""The gates of the soak (``soak.py``): what the room must show once the traffic stops.

They read the room's database read-only, the panes' logs and the watchers' output; they
end the watchers that are left (the last gate is that the survivors hand over cleanly).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import psutil
from _common import stop_process, venv_script, wait_until
from _tmux_observer import TmuxServer

from agent_room.turn.store.engine import host_id
from agent_room.turn.store.home import DB_NAME
from agent_room.workers.memory import memory_lease

LEASES = ("deliverer", "injector", memory_lease(host_id()))
"""The workers' leases in ``agent-room watch``: each must be held by a live watcher (the
memory worker's is its host's)."""
HANDED = re.compile(rb"^(?:CONTEXT|BLOCKED): .*$", re.MULTILINE)
"""Lines where the stand-in prints what its hooks handed over."""


@dataclass
class Send:
    """One ``agent-room send`` of the traffic."""

    token: str
    sender: str
    recipient: str
    started: float
    ended: float = 0.0
    message_id: int | None = None
    error: str = ""


@dataclass
class Incarnation:
    """One ``agent-room watch`` process."""

    slot: int
    proc: subprocess.Popen[bytes]
    log: Path
    started: float
    ps: psutil.Process
    ended: float | None = None
    killed: bool = False
    cpu: float = 0.0
    rss: list[int] = field(default_factory=list)

    def sample(self) -> None:
        with contextlib.suppress(psutil.Error):
            times = self.ps.cpu_times()
            self.cpu = times.user + times.system
            self.rss.append(self.ps.memory_info().rss)


class Soak(Protocol):
    """What the gates read of a run (``soak.Soak``), declared here so that the soak imports
    its gates and never the other way round."""

    scratch: Path
    env: dict[str, str]
    names: list[str]
    panes: dict[str, str]
    watchers: list[Incarnation]
    slots: dict[int, Incarnation]
    sends: list[Send]
    locks: list[tuple[float, float]]
    server: TmuxServer

    def db(self) -> contextlib.closing[sqlite3.Connection]: ...

    def lease_pids(self) -> dict[str, int | None]: ...


def handed_over(scratch: Path, names: list[str], prefix: str = "soak") -> dict[str, dict[str, int]]:
    """Per pane: how often each token (``PREFIX-NNNNNN``) appeared in handed-over context."""
    token_re = re.compile(re.escape(prefix).encode() + rb"-(\d{6})")
    seen: dict[str, dict[str, int]] = {}
    for name in names:
        log = scratch / f"pane-{name}.log"
        text = log.read_bytes().replace(b"\r", b"") if log.exists() else b""
        counts: dict[str, int] = {}
        for line in HANDED.findall(text):
            for token in token_re.findall(line):
                key = f"{prefix}-{token.decode()}"
                counts[key] = counts.get(key, 0) + 1
        seen[name] = counts
    return seen


def read_only(home: Path) -> contextlib.closing[sqlite3.Connection]:
    """A read-only look at a room (readers never wait for the write lock in WAL)."""
    path = home / DB_NAME
    return contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30))


def delivery_counts(conn: sqlite3.Connection) -> tuple[dict[int, int], dict[int, str]]:
    """Per message: how many times it was handed over, and its status now."""
    receipts = dict(
        conn.execute(
            "SELECT message_id, count(*) FROM events WHERE kind = 'message.delivered'"
            " GROUP BY message_id"
        ).fetchall()
    )
    status = dict(conn.execute("SELECT id, status FROM messages").fetchall())
    return receipts, status


def check_messages(soak: Soak) -> list[str]:
    """Gates 1 and 2: exactly once for what was stored, nothing for what failed."""
    problems: list[str] = []
    seen = handed_over(soak.scratch, soak.names)
    with soak.db() as conn:
        receipts, status = delivery_counts(conn)
        bodies = {str(r[0]) for r in conn.execute("SELECT body FROM messages").fetchall()}
    stored_tokens = {b.split(" ", 1)[0] for b in bodies if b.startswith("soak-")}
    for send in soak.sends:
        if send.message_id is None:
            if send.token in stored_tokens:
                problems.append(f"{send.token}: the send failed but the message was stored")
            if "\n" in send.error or "Traceback" in send.error:
                problems.append(f"{send.token}: the send failed with more than one line")
            if not any(a - 1 <= send.ended and send.started <= b + 1 for a, b in soak.locks):
                problems.append(f"{send.token}: failed with no lock held: {send.error}")
            continue
        mid = send.message_id
        where = {n: c[send.token] for n, c in seen.items() if send.token in c}
        if status.get(mid) not in ("delivered", "read"):
            problems.append(f"#{mid} ({send.token}): {status.get(mid)}, not handed over")
            continue
        if receipts.get(mid) != 1:
            problems.append(f"#{mid} ({send.token}): {receipts.get(mid, 0)} receipts")
        if where != {send.recipient: 1}:
            problems.append(f"#{mid} ({send.token}) to @{send.recipient}: handed over {where}")
    return problems


def check_agents(soak: Soak) -> list[str]:
    """Gate 4: every stand-in still runs in its pane and is registered, not ended."""
    problems = []
    lines = soak.server.run("list-panes", "-a", "-F", "#{pane_id} #{pane_dead}").splitlines()
    dead = {p for p, d in (line.split() for line in lines) if d == "1"}
    alive = {line.split()[0] for line in lines}
    with soak.db() as conn:
        state = dict(
            conn.execute("SELECT name, state FROM sessions WHERE left_at IS NULL").fetchall()
        )
    for name, pane in soak.panes.items():
        if pane not in alive or pane in dead:
            problems.append(f"@{name}: its pane {pane} is gone")
        if state.get(name) in (None, "ended"):
            problems.append(f"@{name}: {state.get(name) or 'not registered'} in the room")
    return problems


def check_watchers(soak: Soak) -> list[str]:
    """Gate 3: survivors run, renew every lease, hand over to the last one on SIGTERM."""
    problems = []
    for watcher in soak.watchers:
        text = watcher.log.read_text(errors="replace")
        if "Traceback" in text:
            tail = " | ".join(text.strip().splitlines()[-3:])
            problems.append(f"watcher pid {watcher.proc.pid} printed a traceback: {tail}")
    live = [w for w in soak.slots.values() if w.proc.poll() is None]
    for watcher in soak.slots.values():
        if watcher.proc.poll() is not None and not watcher.killed:
            problems.append(f"watcher pid {watcher.proc.pid} exited {watcher.proc.returncode}")
    pids = {w.proc.pid for w in live}
    try:
        wait_until(
            lambda: all(soak.lease_pids().get(n) in pids for n in LEASES),
            timeout=15,
            step=0.5,
            what="every lease renewed by a live watcher",
        )
    except TimeoutError:
        problems.append(f"leases not held by a live watcher: {soak.lease_pids()}")
    if not live:
        return [*problems, "no watcher left running"]
    for watcher in live:
        watcher.sample()
    holder = soak.lease_pids().get("deliverer")
    live.sort(key=lambda w: w.proc.pid != holder)  # the holder hands over first
    last = live[-1]
    for watcher in live[:-1]:
        code = stop_process(watcher.proc)
        watcher.ended = time.time()
        if code != 0:
            problems.append(f"watcher pid {watcher.proc.pid} exited {code} on SIGTERM")
    try:
        wait_until(
            lambda: all(soak.lease_pids().get(n) == last.proc.pid for n in LEASES),
            timeout=15,
            step=0.2,
            what="the last watcher holding every lease",
        )
    except TimeoutError:
        problems.append(f"the last watcher did not take every lease: {soak.lease_pids()}")
    sender, recipient = soak.names[0], soak.names[1]
    out = subprocess.run(
        [str(venv_script("agent-room")), "send", f"@{recipient}", "soak-999999 the last one"],
        env={**soak.env, "AGENT_ROOM_NAME": sender},
        capture_output=True,
        check=False,
    )
    mid = out.stdout.decode().strip()

    def delivered() -> bool:
        with soak.db() as conn:
            row = conn.execute("SELECT status FROM messages WHERE id = $1", (mid,)).fetchone()
        return bool(row) and row[0] in ("delivered", "read")

    try:
        wait_until(delivered, timeout=30, step=0.2, what="the last message delivered")
    except TimeoutError:
        problems.append("the last watcher did not deliver a message within 30 s")
    last.sample()
    code = stop_process(last.proc)
    last.ended = time.time()
    if code != 0:
        problems.append(f"the last watcher (pid {last.proc.pid}) exited {code} on SIGTERM")
    return problems
