"""Benchmark of ``agent-room status``: the line a tmux status bar runs every few seconds.

Run it from the project root::

    .venv/bin/python bench/bench_status.py            # 200 sessions, 100,000 messages
    .venv/bin/python bench/bench_status.py --quick    # 20 sessions, 10,000 messages

A throw-away room is filled through the room's own store: sessions registered (a tenth
waiting in a permission dialog), then messages between them written in bulk, most read,
some failed, some still queued, a few to ``@operator``, and pending handovers. Then
``agent-room status`` and ``agent-room status --format ...`` run as fresh processes,
round-robin with the bare interpreter (``python -c pass``) as the baseline; every run's
output is checked against the counts the store gives.

Budget: the median of ``agent-room status`` at most 3x the bare interpreter's median
(same run). The exit code is 1 when it fails. Results go to ``bench/results/status.json``.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    Command,
    bench_env,
    median,
    ms,
    p95,
    print_table,
    time_round_robin,
    venv_python,
    venv_script,
    write_result,
)

from agent_room.room.service import Room
from agent_room.turn.core.status_line import DEFAULT_STATUS_FORMAT, render_status
from agent_room.turn.store.attention import status_counts
from agent_room.turn.store.db import write_transaction

RATIO = 3.0


def fill(home: Path, sessions: int, messages: int) -> str:
    """A room of ``sessions`` and ``messages``; return the status line it must print."""
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    now = time.time()
    names = [f"agent{i:03d}" for i in range(sessions)]
    for i, name in enumerate(names):
        room.store.register(
            {"session_id": f"s-{name}", "state": "waiting" if i % 10 == 0 else "idle"},
            wanted=name,
            explicit=True,
            at=now - 3600,
            alive=lambda *_: True,
        )
    rng = random.Random(7)
    rows = []
    for i in range(messages):
        sender, recipient = rng.sample(names, 2)
        kind = rng.random()
        if kind < 0.01:
            status, read = "failed", None
        elif kind < 0.03:
            status, read = "queued", None
        elif kind < 0.031:
            recipient, status, read = "operator", "queued", None
        else:
            status, read = "delivered", now - 60
        rows.append(
            ("chat", sender, recipient, f"message {i}", now - 3000 + i * 0.01, status, read)
        )
    conn = room.store.conn
    with write_transaction(conn):
        conn.executemany(
            "INSERT INTO messages (kind, sender, recipient, body, created_at, status, read_at)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7)",
            rows,
        )
    for i in range(5):
        room.send_handover(names[i], names[i + 1], body=f"handover {i}")
    expected = render_status(DEFAULT_STATUS_FORMAT, status_counts(conn))
    room.close()
    return expected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a small room, fewer runs")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    sessions, messages, runs = (20, 10_000, 10) if args.quick else (200, 100_000, 40)
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        home = Path(tmp) / "room"
        expected = fill(home, sessions, messages)
        if not args.quiet:
            print(
                f"... room of {sessions} sessions, {messages:,} messages: {expected}",
                file=sys.stderr,
            )
        env = bench_env(home)

        def check(result: subprocess.CompletedProcess[bytes]) -> None:
            line = result.stdout.decode().strip()
            if line != expected:
                raise AssertionError(f"status printed {line!r}, the room says {expected!r}")

        script = str(venv_script("agent-room"))
        commands = [
            Command("python -c pass", [str(venv_python()), "-c", "pass"], env),
            Command("agent-room status", [script, "status"], env, check=check),
            Command(
                "status --format",
                [
                    script,
                    "status",
                    "--format",
                    "{handovers}/{waiting}/{failed}/{frozen}/{messages}",
                ],
                env,
            ),
        ]
        time_round_robin(commands, runs, warmup=2)
    print_table(
        ["command", "median ms", "p95 ms"],
        [[c.label, ms(median(c.timings)), ms(p95(c.timings))] for c in commands],
        title=f"as processes ({sessions} sessions, {messages:,} messages, {runs} runs)",
    )
    bare, status = median(commands[0].timings), median(commands[1].timings)
    ratio = status / bare
    results = {
        c.label: {
            "median_ms": round(median(c.timings) * 1e3, 3),
            "p95_ms": round(p95(c.timings) * 1e3, 3),
        }
        for c in commands
    }
    write_result(
        "status",
        {
            "sessions": sessions,
            "messages": messages,
            "runs": runs,
            "ratio": round(ratio, 2),
            "results": results,
        },
    )
    print(f"status / bare interpreter: {ratio:.2f}x (budget {RATIO:.0f}x)")
    ok = ratio <= RATIO
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
