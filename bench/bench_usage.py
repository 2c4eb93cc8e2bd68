"""Benchmark of what the agents spend: reading their records, and ``usage`` on a long history.

Run it from the project root::

    .venv/bin/python bench/bench_usage.py            # 50 agents x 20 MB; 1,000,000 requests
    .venv/bin/python bench/bench_usage.py --quick    # 50 x 2 MB; 100,000 requests

In throw-away rooms:

a. *first read*: the usage reader (``Usage.follow_live``, what the memory worker runs
   every pass) reads 50 live agents' Claude Code transcripts of 20 MB each for the first
   time (built from the real transcript in ``tests/fixtures/transcripts``, each message
   id made unique): the one-time cost of a room the reader had not seen, with its
   requests per second;
b. *at rest*: passes over the same 50 transcripts when none grew (one ``stat`` each),
   as CPU time per pass (user + system of this process) and as a share of one core at
   the worker's pass interval (``workers.memory.INTERVAL``): the budget is the watch's
   at rest, 0.5 %;
c. *incremental*: a pass after 5 of the 50 agents each wrote one more turn;
d. *the watch at rest*: ``agent-room watch`` (all its workers: deliverer, injector,
   memory with the usage reader, notifier) over 50 live agents (each a ``sleep``
   process) whose transcripts (2 MB each: what it costs at rest does not depend on their
   size) were read already, its CPU over a quiet window as a share of one core: the
   budget is 0.5 %;
e. ``agent-room usage`` (today, by agent) and ``usage --by model --since 1d`` as fresh
   processes on a room of one day of 10,000 requests and on one of 100 such days
   (1,000,000 requests of 50 agents), interleaved with ``history 20`` on each and a bare
   ``python -c pass``: flat means the big room's medians stay within 1.5x of the small
   room's, as ``history``'s do (``--only-commands`` runs this part alone).

Results go to ``bench/results/usage.json``; the exit code is 1 when a budget fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    Command,
    Stats,
    bench_env,
    median,
    ms,
    print_table,
    progress,
    stop_process,
    time_round_robin,
    venv_python,
    venv_script,
    write_result,
)

from agent_room.adapters.processes import SystemProbe
from agent_room.room.memory import Memory
from agent_room.room.service import Room
from agent_room.room.usage import Usage
from agent_room.store import usage as store_usage
from agent_room.store.usage import last_usage_id
from agent_room.turn.procfs import read_stat
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.workers.memory import INTERVAL

AGENTS = 50
REST_BUDGET = 0.5
"""Percent of one core the reader may take at rest (the watch's budget)."""
DAYS = 100
"""The big room's history: its requests over this many days, as many each day as the
small room has in its one day (so ``usage`` for today reads as many rows in both)."""
FLAT = 1.5
"""The big room's median over the small room's, at most, for a flat command."""
EXCERPT = ROOT / "tests" / "fixtures" / "transcripts" / "spotter_excerpt_turn_end_compact.jsonl"
MODELS = ("claude-opus-4-6", "claude-haiku-4-5-20251001", "gpt-5.1-codex", "gemini-2.5-pro")


@dataclass(frozen=True)
class Sizes:
    megabytes: int
    requests: int
    runs: int
    rest_passes: int
    watch_seconds: float


FULL = Sizes(megabytes=20, requests=1_000_000, runs=15, rest_passes=50, watch_seconds=30)
QUICK = Sizes(megabytes=2, requests=100_000, runs=5, rest_passes=20, watch_seconds=10)


def cpu() -> float:
    """CPU seconds of this process so far (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def transcript(path: Path, megabytes: int, agent: int) -> int:
    """A transcript of about ``megabytes`` from the real excerpt, every message id unique;
    return the number of requests in it."""
    lines = EXCERPT.read_text().splitlines()
    ids = sorted({json.loads(line).get("message", {}).get("id") for line in lines} - {None})
    written = requests = 0
    copy = 0
    with path.open("w") as out:
        while written < megabytes * 1_000_000:
            block = "\n".join(lines)
            for old in ids:
                block = block.replace(old, f"{old}_{agent}_{copy}")
            out.write(block + "\n")
            written += len(block) + 1
            requests += len(ids)
            copy += 1
    return requests


def one_turn(path: Path, n: int) -> None:
    """Append one assistant message (a turn's worth of usage) to a transcript."""
    line = {
        "type": "assistant",
        "timestamp": "2026-02-12T15:00:00.000Z",
        "message": {
            "id": f"msg_more_{n}",
            "model": "claude-opus-4-6",
            "usage": {"input_tokens": 5, "output_tokens": 300, "cache_read_input_tokens": 90000},
        },
    }
    with path.open("a") as out:
        out.write(json.dumps(line) + "\n")


def bench_reading(root: Path, sizes: Sizes, say: Any) -> dict[str, Any]:
    home = root / "reading"
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    paths = []
    total = 0
    say(f"writing {AGENTS} transcripts of {sizes.megabytes} MB")
    for n in range(AGENTS):
        path = root / f"agent-{n:02d}.jsonl"
        total += transcript(path, sizes.megabytes, n)
        room.store.register(
            {"session_id": f"s-{n}", "state": "idle", "transcript_path": str(path)},
            wanted=f"agent-{n:02d}",
            explicit=True,
            at=time.time(),
            alive=lambda *_: True,
        )
        paths.append(path)
    usage = Usage(room)
    say("first read")
    began, wall = cpu(), time.perf_counter()
    stored = usage.follow_live()
    first_cpu, first_wall = cpu() - began, time.perf_counter() - wall
    say("at rest")
    rest = []
    for _ in range(sizes.rest_passes):
        began = cpu()
        assert usage.follow_live() == 0
        rest.append(cpu() - began)
    say("incremental")
    for n in range(5):
        one_turn(paths[n * 10], n)
    began = cpu()
    added = usage.follow_live()
    incremental = cpu() - began
    room.close()
    share = 100 * median(rest) / INTERVAL
    return {
        "agents": AGENTS,
        "megabytes_each": sizes.megabytes,
        "requests_in_transcripts": total,
        "first_read": {
            "stored": stored,
            "cpu_s": round(first_cpu, 2),
            "wall_s": round(first_wall, 2),
            "requests_per_s": round(stored / first_wall),
            "mb_per_s": round(AGENTS * sizes.megabytes / first_wall, 1),
        },
        "rest_pass": Stats.of(rest).as_ms(),
        "rest_cpu_percent": round(share, 3),
        "incremental_pass_ms": round(incremental * 1000, 2),
        "incremental_added": added,
        "budget_ok": share <= REST_BUDGET,
    }


def bench_watch_at_rest(root: Path, seconds: float, say: Any) -> dict[str, Any]:
    """The whole watch's CPU at rest over 50 live agents whose records were read."""
    home = root / "watch" / "room"
    sleepers = [
        subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL) for _ in range(AGENTS)
    ]
    watch: subprocess.Popen[bytes] | None = None
    try:
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        registry = Registry(room, SystemProbe())
        for n, proc in enumerate(sleepers):
            path = root / "watch" / f"agent-{n:02d}.jsonl"
            transcript(path, 2, n)
            stat = read_stat(proc.pid)
            registry.register(
                SessionFacts(
                    session_id=f"idle-{n}", cwd="/srv", transcript_path=str(path),
                    pid=proc.pid, pid_start=stat.start_ticks if stat else None,
                    pane=f"%{1000 + n}", tmux_socket="/nonexistent", agent="claude",
                    name=f"agent-{n:02d}", parent_hint=None, ancestors=(),
                )
            )  # fmt: skip
        say("the watch's records read first (memory and usage)")
        Memory(room).follow_live()
        Usage(room).follow_live()
        requests = last_usage_id(room.store)
        room.close()
        null = subprocess.DEVNULL
        watch = subprocess.Popen(
            [str(venv_script("agent-room")), "watch"],
            env=bench_env(home), stdin=null, stdout=null, stderr=null,
        )  # fmt: skip
        time.sleep(5.0)  # its start, its first passes
        say(f"the watch at rest over {seconds:.0f} s")
        before, wall = process_cpu(watch.pid), time.perf_counter()
        time.sleep(seconds)
        used, elapsed = process_cpu(watch.pid) - before, time.perf_counter() - wall
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        live = sum(1 for r in store_usage.followed(room.store, time.time()))
        after = last_usage_id(room.store)
        room.close()
    finally:
        if watch is not None:
            stop_process(watch)
        for proc in sleepers:
            stop_process(proc)
    share = 100 * used / elapsed
    return {
        "agents": AGENTS,
        "files_followed": live,
        "requests": requests,
        "new_requests_while_at_rest": after - requests,
        "window_s": round(elapsed, 1),
        "cpu_percent": round(share, 3),
        "budget_ok": share <= REST_BUDGET and live == AGENTS,
    }


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process so far, from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def seed_history(home: Path, requests: int, days: int) -> None:
    """``requests`` usage rows of 50 agents evenly over ``days`` days, the newest now."""
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    room.close()
    now = time.time()
    rng = random.Random(30)
    conn = sqlite3.connect(home / "room.db")
    rows = []
    for n in range(requests):
        at = now - (requests - n) * (days * 86400 / requests)
        name = f"agent-{n % AGENTS:02d}"
        rows.append(
            (
                f"s-{n % AGENTS}",
                f"msg_{n}",
                name,
                "bench",
                "claude",
                rng.choice(MODELS),
                rng.randrange(1, 50),
                rng.randrange(10, 2000),
                rng.randrange(1000, 150_000),
                rng.randrange(0, 5000),
                rng.random() / 10,
                at,
            )
        )
        if len(rows) == 50_000:
            _insert(conn, rows)
            rows = []
    _insert(conn, rows)
    conn.close()


def _insert(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    conn.executemany(
        "INSERT INTO usage (session_id, key, name, host, client, model, input, output,"
        " cache_read, cache_write, cost_usd, at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)",
        rows,
    )
    conn.commit()


def bench_usage_command(root: Path, sizes: Sizes, say: Any) -> dict[str, Any]:
    cli = str(venv_script("agent-room"))
    commands = []
    per_day = sizes.requests // DAYS
    for label, count, days in (("small", per_day, 1), ("big", sizes.requests, DAYS)):
        home = root / label
        say(f"seeding {count:,} requests over {days} days ({label})")
        seed_history(home, count, days)
        env = bench_env(home)
        commands += [
            Command(f"usage ({label})", [cli, "usage"], env),
            Command(
                f"usage --by model --since 1d ({label})",
                [cli, "usage", "--by", "model", "--since", "1d"],
                env,
            ),
            Command(f"history 20 ({label})", [cli, "history", "20"], env),
        ]
    commands.append(Command("python -c pass", [str(venv_python()), "-c", "pass"], {}))
    say("timing the commands")
    time_round_robin(commands, sizes.runs, shuffle_seed=30)
    found = {c.label: Stats.of(c.timings) for c in commands}
    checks = []
    for what in ("usage", "usage --by model --since 1d", "history 20"):
        small, big = found[f"{what} (small)"], found[f"{what} (big)"]
        ratio = big.median / small.median
        checks.append({"command": what, "ratio": round(ratio, 2), "flat": ratio <= FLAT})
    return {"timings": {k: v.as_ms() for k, v in found.items()}, "flat": checks}


def report_reading(reading: dict[str, Any], watch: dict[str, Any], sizes: Sizes) -> None:
    """Parts a to d as a table."""
    first = reading["first_read"]
    print_table(
        ("reading", "value"),
        [
            ("transcripts", f"{AGENTS} x {sizes.megabytes} MB"),
            ("first read (wall)", f"{first['wall_s']} s, {first['requests_per_s']:,} requests/s"),
            ("at rest, CPU per pass (median)", ms(reading["rest_pass"]["median_ms"] / 1000)),
            ("at rest, share of a core", f"{reading['rest_cpu_percent']} % (<= {REST_BUDGET} %)"),
            ("incremental pass (5 new turns)", f"{reading['incremental_pass_ms']} ms"),
            (
                f"agent-room watch at rest ({watch['files_followed']} followed)",
                f"{watch['cpu_percent']} % (<= {REST_BUDGET} %)",
            ),
        ],
        title="Reading the agents' records",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--only-commands", action="store_true", help="only the usage commands (part e)"
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    say = progress(args.quiet)
    with tempfile.TemporaryDirectory(prefix="bench-usage-") as tmp:
        root = Path(tmp)
        skip = {"budget_ok": True, "skipped": True}
        reading = skip if args.only_commands else bench_reading(root, sizes, say)
        watch = skip if args.only_commands else bench_watch_at_rest(root, sizes.watch_seconds, say)
        command = bench_usage_command(root, sizes, say)
    if not args.only_commands:
        report_reading(reading, watch, sizes)
    print_table(
        ("command", "median", "p95"),
        [
            (label, ms(t["median_ms"] / 1000), ms(t["p95_ms"] / 1000))
            for label, t in command["timings"].items()
        ],
        title=f"usage on 1 and {DAYS} days of {sizes.requests // DAYS:,} requests"
        " (fresh processes)",
    )
    for check in command["flat"]:
        verdict = "flat" if check["flat"] else "NOT flat"
        print(f"{check['command']}: big / small = {check['ratio']} ({verdict})")
    ok = (
        reading["budget_ok"]
        and watch["budget_ok"]
        and all(c["flat"] for c in command["flat"] if c["command"] != "history 20")
    )
    path = write_result(
        "usage",
        {"sizes": sizes.__dict__, "reading": reading, "watch": watch, "usage": command, "ok": ok},
    )
    print(f"\n{'ok' if ok else 'BUDGET FAILED'} -> {path.relative_to(ROOT)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
