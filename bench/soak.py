"""Soak: ten agents talking for ten minutes while the room is locked and watchers are killed.

Run it from the project root (it is not part of the test suite)::

    .venv/bin/python bench/soak.py                 # ten minutes
    .venv/bin/python bench/soak.py --minutes 2     # a shorter soak

Ten stand-in agents (``tests/standin_agent.py``, firing the real hooks) run as the
initial commands of panes on a private tmux server and register in a throw-away room.
Two ``agent-room watch`` processes serve the room: one holds the workers' leases, the
other stands by. For the whole run:

- *traffic*: ``agent-room send`` processes between random pairs of agents, about one
  message a second, each body carrying a unique token;
- *the database locked*: now and then another process holds ``BEGIN IMMEDIATE`` on the
  room's database for longer than the store's busy timeout, so sends, hooks and workers
  all meet "database is locked";
- *watchers killed*: now and then a watcher (the lease holder more often than not) gets
  SIGKILL and is started again a few seconds later.

Then the traffic stops, the room drains, and the gates are checked:

1. every message a send reported stored was handed over exactly once: one receipt
   (``message.delivered`` in the audit log), its token exactly once in what its
   recipient's pane printed as handed-over context, and in no other pane;
2. a send that failed stored nothing, said why in one line, and failed only while the
   database was locked;
3. every watcher the soak did not kill is still running with no traceback in its
   output, the three leases (deliverer, injector, memory) are held and renewed by live
   watchers; when the others stop (SIGTERM, exit 0) the last one takes every lease and
   delivers one more message;
4. every agent is still running;
5. the soak did what it says: at least one lock held and one watcher killed.

The watchers' resident memory (RSS) and CPU time are reported per process. The exit
code is 1 when a gate fails. Results go to ``bench/results/soak.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from _common import (
    bench_env,
    print_table,
    progress,
    standin_command,
    stop_process,
    venv_python,
    venv_script,
    wait_until,
    write_result,
)
from _soak_gates import (
    LEASES,
    Incarnation,
    Send,
    check_agents,
    check_messages,
    check_watchers,
    read_only,
)
from _tmux_observer import TmuxServer

from agent_room.turn.store.db import connect
from agent_room.turn.store.home import DB_NAME

BUSY_TIMEOUT = float(inspect.signature(connect).parameters["timeout"].default)
"""The store's busy timeout: a lock held longer makes every writer give up."""

LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""
"""Another process holding the room's write lock (as a stuck writer would)."""


def now() -> float:
    return time.time()


class Soak:
    """The agents, the watchers, the traffic and the faults of one run."""

    def __init__(self, scratch: Path, args: argparse.Namespace, step: Any) -> None:
        self.scratch = scratch
        self.home = scratch / "room"
        self.args = args
        self.step = step
        self.rng = random.Random(args.seed)
        self.env = bench_env(self.home)
        self.names = [f"agent{n}" for n in range(args.agents)]
        self.panes: dict[str, str] = {}
        self.watchers: list[Incarnation] = []
        self.slots: dict[int, Incarnation] = {}
        self.sends: list[Send] = []
        self.locks: list[tuple[float, float]] = []
        self.kills = 0
        self.stop = threading.Event()
        self.guard = threading.Lock()
        self.counter = 0
        self.server = TmuxServer(self.env)

    # -- the cast -------------------------------------------------------------------

    def start_agents(self) -> None:
        """Ten panes, each running a stand-in; what each prints goes to a log file."""
        connect(self.home).close()  # the room, at the current schema
        first = True
        for name in self.names:
            # the stand-in starts once pipe-pane listens, so nothing it prints is missed
            command = f"sleep 0.5; exec {standin_command(self.home, name)}"
            if first:
                pane = self.server.start(command)
                first = False
            else:
                pane = self.server.new_window(name, command)
            log = self.scratch / f"pane-{name}.log"
            self.server.run("pipe-pane", "-t", pane, f"cat >> {log}")
            self.panes[name] = pane
        wait_until(
            lambda: self.registered() == set(self.names),
            timeout=60,
            step=0.2,
            what="every agent registered and idle",
        )

    def registered(self) -> set[str]:
        with self.db() as conn:
            rows = conn.execute("SELECT name FROM sessions WHERE state = 'idle'").fetchall()
        return {str(r[0]) for r in rows}

    def start_watcher(self, slot: int) -> None:
        log = self.scratch / f"watch-{slot}-{len(self.watchers)}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(venv_script("agent-room")), "watch"],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        born = Incarnation(slot, proc, log, now(), psutil.Process(proc.pid))
        with self.guard:
            self.watchers.append(born)
            self.slots[slot] = born

    def db(self) -> contextlib.closing[sqlite3.Connection]:
        """A read-only look at the room (readers never wait for the write lock in WAL)."""
        return read_only(self.home)

    def lease_pids(self) -> dict[str, int | None]:
        with self.db() as conn:
            rows = conn.execute("SELECT name, pid, expires_at FROM leases").fetchall()
        at = now()
        return {str(n): (int(p) if p and e > at else None) for n, p, e in rows}

    # -- what happens during the soak --------------------------------------------

    def traffic(self) -> None:
        """Sends between random pairs, about ``rate`` a second over two streams."""
        env = dict(self.env)
        while not self.stop.wait(self.rng.expovariate(self.args.rate / 2)):
            sender, recipient = self.rng.sample(self.names, 2)
            with self.guard:
                self.counter += 1
                send = Send(f"soak-{self.counter:06d}", sender, recipient, now())
                self.sends.append(send)
            body = f"{send.token} from @{sender}: status of the soak"
            try:
                proc = subprocess.run(
                    [str(venv_script("agent-room")), "send", f"@{recipient}", body],
                    env={**env, "AGENT_ROOM_NAME": sender},
                    capture_output=True,
                    timeout=120,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                send.ended, send.error = now(), "hung for 120 s"
                continue
            send.ended = now()
            out = proc.stdout.decode().strip()
            if proc.returncode == 0 and out.isdigit():
                send.message_id = int(out)
            else:
                send.error = (
                    proc.stderr.decode(errors="replace").strip() or f"exit {proc.returncode}"
                )

    def faults(self) -> None:
        """Locks and kills at jittered intervals until the traffic stops."""
        start = now()
        span = self.args.minutes * 60
        next_lock = start + min(self.args.lock_every / 2, span / 3)
        next_kill = start + min(self.args.kill_every / 2, span / 2)
        lockers: list[subprocess.Popen[bytes]] = []
        while not self.stop.wait(0.2):
            at = now()
            if at >= next_lock:
                lockers.append(self.lock())
                next_lock = at + self.args.lock_every * self.rng.uniform(0.7, 1.3)
            if at >= next_kill:
                self.kill_one()
                next_kill = at + self.args.kill_every * self.rng.uniform(0.7, 1.3)
        for proc in lockers:
            proc.wait(timeout=self.args.lock_seconds + 60)

    def lock(self) -> subprocess.Popen[bytes]:
        hold = self.args.lock_seconds
        proc = subprocess.Popen(
            [str(venv_python()), "-c", LOCKER, str(self.home / DB_NAME), str(hold)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

        def note() -> None:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() == b"locked":
                taken = now()
                with self.guard:
                    self.locks.append((taken, taken + hold))
                self.step(f"database write-locked for {hold:g} s")

        threading.Thread(target=note, daemon=True).start()
        return proc

    def kill_one(self) -> None:
        """SIGKILL a watcher (the deliverer's lease holder two times in three), restart it."""
        with contextlib.suppress(sqlite3.Error):
            holder = self.lease_pids().get("deliverer")
        live = [w for w in self.slots.values() if w.proc.poll() is None]
        if not live:
            return
        victims = [w for w in live if w.proc.pid == holder]
        victim = victims[0] if victims and self.rng.random() < 2 / 3 else self.rng.choice(live)
        victim.sample()
        victim.proc.kill()
        victim.proc.wait()
        victim.ended, victim.killed = now(), True
        self.kills += 1
        self.step(f"watcher pid {victim.proc.pid} killed (SIGKILL)")
        if not self.stop.wait(self.rng.uniform(1.0, 5.0)):
            self.start_watcher(victim.slot)

    def sampler(self) -> None:
        while not self.stop.wait(2.0):
            with self.guard:
                live = [w for w in self.slots.values() if w.proc.poll() is None]
            for watcher in live:
                watcher.sample()

    # -- the end ----------------------------------------------------------------------

    def drain(self) -> bool:
        """Wait until every stored message is receipted (or the drain time is over)."""
        ids = [s.message_id for s in self.sends if s.message_id is not None]

        def done() -> bool:
            with self.db() as conn:
                left = conn.execute(
                    "SELECT count(*) FROM messages WHERE status NOT IN ('delivered', 'read')"
                    f" AND id IN ({','.join('?' * len(ids))})",
                    ids,
                ).fetchone()[0]
            return int(left) == 0

        try:
            wait_until(done, timeout=self.args.drain, step=1.0, what="the room to drain")
        except TimeoutError:
            return False
        return True


def report(soak: Soak, gates: dict[str, list[str]], wall: float) -> dict[str, Any]:
    ok_sends = [s for s in soak.sends if s.message_id is not None]
    rows = []
    for w in soak.watchers:
        life = (w.ended or now()) - w.started
        rss = [r / 2**20 for r in w.rss] or [0.0]
        rows.append(
            [
                str(w.proc.pid),
                str(w.slot),
                f"{life:.0f}",
                "SIGKILL" if w.killed else "SIGTERM at the end",
                f"{rss[0]:.1f}",
                f"{rss[-1]:.1f}",
                f"{max(rss):.1f}",
                f"{w.cpu:.1f}",
                f"{100 * w.cpu / life:.2f}" if life else "-",
            ]
        )
    print_table(
        ["watcher pid", "slot", "lived s", "ended by", "RSS first MB", "last MB", "max MB",
         "CPU s", "% of a core"],
        rows,
        title="Watchers: resident memory (sampled every 2 s) and CPU time",
    )  # fmt: skip
    lives = [(w.ended or now()) - w.started for w in soak.watchers]
    cpu = sum(w.cpu for w in soak.watchers)
    longest = max(zip(lives, soak.watchers, strict=True), key=lambda pair: pair[0])
    grown = [r / 2**20 for r in longest[1].rss] or [0.0]
    print(
        f"All watchers: {cpu:.1f} s of CPU over {sum(lives):.0f} s of watcher life"
        f" ({100 * cpu / max(sum(lives), 1e-9):.2f} % of a core), RSS at most"
        f" {max((max(w.rss, default=0) for w in soak.watchers), default=0) / 2**20:.1f} MB;"
        f" the longest-lived ({longest[0]:.0f} s) went from {grown[0]:.1f} to {grown[-1]:.1f} MB"
    )
    print(
        f"\n{len(soak.sends)} sends ({len(ok_sends)} stored, "
        f"{len(soak.sends) - len(ok_sends)} failed), {len(soak.locks)} locks of "
        f"{soak.args.lock_seconds:g} s, {soak.kills} watchers killed, {wall / 60:.1f} min"
    )
    ok = True
    for gate, problems in gates.items():
        ok &= not problems
        print(f"{'PASS' if not problems else 'FAIL'}  {gate}")
        for problem in problems[:10]:
            print(f"      {problem}")
        if len(problems) > 10:
            print(f"      ... and {len(problems) - 10} more")
    print(f"\nSoak: {'PASS' if ok else 'FAIL'}")
    return {
        "pass": ok,
        "minutes": soak.args.minutes,
        "agents": soak.args.agents,
        "sends": len(soak.sends),
        "stored": len(ok_sends),
        "failed_sends": [s.error for s in soak.sends if s.message_id is None][:20],
        "locks": len(soak.locks),
        "lock_seconds": soak.args.lock_seconds,
        "kills": soak.kills,
        "gates": gates,
        "watchers": [
            {
                "pid": w.proc.pid,
                "killed": w.killed,
                "lived_s": round((w.ended or now()) - w.started, 1),
                "cpu_s": round(w.cpu, 2),
                "rss_mb": [round(r / 2**20, 1) for r in (w.rss[:1] + w.rss[-1:])],
                "rss_max_mb": round(max(w.rss, default=0) / 2**20, 1),
            }
            for w in soak.watchers
        ],
    }


def main() -> int:
    """Run the soak; 1 when a gate fails."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the traffic")
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--rate", type=float, default=1.0, help="messages per second")
    parser.add_argument("--watchers", type=int, default=2, help="one active, the rest stand by")
    parser.add_argument("--lock-every", type=float, default=60.0, help="seconds between locks")
    parser.add_argument(
        "--lock-seconds", type=float, default=BUSY_TIMEOUT + 2, help="how long a lock is held"
    )
    parser.add_argument("--kill-every", type=float, default=45.0, help="seconds between kills")
    parser.add_argument("--drain", type=float, default=180.0, help="seconds to wait at the end")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the schedule")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args()
    step = progress(args.quiet)
    scratch = Path(tempfile.mkdtemp(prefix="agent-room-soak-"))
    scratch.chmod(0o700)
    soak = Soak(scratch, args, step)
    threads: list[threading.Thread] = []
    try:
        step(f"{args.agents} stand-in agents on tmux server {soak.server.name}")
        soak.start_agents()
        for slot in range(args.watchers):
            soak.start_watcher(slot)
        wait_until(
            lambda: all(soak.lease_pids().get(n) for n in LEASES),
            timeout=30,
            step=0.2,
            what="the watchers holding their leases",
        )
        step(f"traffic for {args.minutes:g} min (room in {soak.home})")
        started = now()
        threads = [
            threading.Thread(target=target, daemon=True)
            for target in (soak.traffic, soak.traffic, soak.faults, soak.sampler)
        ]
        for thread in threads:
            thread.start()
        soak.stop.wait(args.minutes * 60)
        soak.stop.set()
        for thread in threads:
            thread.join(timeout=180)
        wall = now() - started
        for slot in range(args.watchers):  # a kill at the very end left a slot empty
            if soak.slots[slot].proc.poll() is not None and soak.slots[slot].killed:
                soak.start_watcher(slot)
        step("traffic stopped; draining")
        drained = soak.drain()
        gates = {
            "every stored message handed over exactly once": check_messages(soak)
            + ([] if drained else [f"the room did not drain in {args.drain:g} s"]),
            "every agent still running": check_agents(soak),
            "every watcher not killed still running; leases renewed and handed over":
                check_watchers(soak),
            "faults happened": [
                *(["no lock was taken"] if not soak.locks else []),
                *(["no watcher was killed"] if not soak.kills else []),
            ],
        }  # fmt: skip
        data = report(soak, gates, wall)
        print(f"Results: {write_result('soak', data)}")
        return 0 if data["pass"] else 1
    finally:
        soak.stop.set()
        for watcher in soak.watchers:
            stop_process(watcher.proc)
        soak.server.kill()
        if args.keep:
            print(f"Scratch kept: {scratch}", file=sys.stderr)
        else:
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
