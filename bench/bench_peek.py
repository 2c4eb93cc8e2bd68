"""Benchmark of ``agent-room peek``: the last turns of transcripts of growing size.

Run it from the project root::

    .venv/bin/python bench/bench_peek.py            # 1, 10 and 100 MB (about 30 s)
    .venv/bin/python bench/bench_peek.py --quick    # 1 and 10 MB (a few seconds)

Transcripts are built from the real ones in ``tests/fixtures/transcripts`` (their turns
renumbered, one 20 KB bookkeeping line after each, as a long session's progress and
snapshot lines are), registered under a name in a throw-away room. Then:

a. *in process*: ``adapters.transcripts.read_tail`` for the last 3 turns: time and bytes
   read (the tail is read backwards from the end: the bytes must not grow with the file);
b. *as a process*: ``agent-room peek NAME --turns 3 --tools``, round-robin with
   ``python -c pass`` as the baseline (median, p95).

Budgets: the in-process read of the largest transcript under 20 ms (median), reading at
most 1 MB of it; the peek process on the largest transcript within 1.5 times its time on
the 1 MB one. The exit code is 1 when a budget fails. Results go to
``bench/results/peek.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    ROOT,
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

from agent_room.adapters.transcripts import read_tail
from agent_room.room.service import Room

FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "spotter_short.jsonl"
READ_BUDGET = 0.020
BYTES_BUDGET = 1024 * 1024
PROCESS_RATIO = 1.5


def build(path: Path, megabytes: int) -> int:
    """A transcript of about ``megabytes`` MB; return its size."""
    lines = FIXTURE.read_bytes().splitlines()
    filler = b'{"type":"progress","data":"' + b"x" * 20_000 + b'"}\n'
    target = megabytes * 1024 * 1024
    with path.open("wb") as out:
        turn = 0
        while out.tell() < target:
            for line in lines:
                out.write(line.replace(b"doesnt seem to start", f"turn {turn}".encode()) + b"\n")
            out.write(filler)
            turn += 1
    return path.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="1 and 10 MB, fewer runs")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    sizes = (1, 10) if args.quick else (1, 10, 100)
    runs = 5 if args.quick else 15
    with tempfile.TemporaryDirectory(prefix="bench-peek-") as tmp:
        home = Path(tmp) / "room"
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        env = bench_env(home, CLAUDECODE="", CLAUDE_CODE_SESSION_ID="")
        in_process: list[list[str]] = []
        commands = [Command("python -c pass", [str(venv_python()), "-c", "pass"], env)]
        results: dict[str, dict[str, float]] = {}
        for size in sizes:
            name = f"agent{size}"
            path = Path(tmp) / f"{name}.jsonl"
            actual = build(path, size)
            if not args.quiet:
                print(f"... {size} MB transcript built", file=sys.stderr)
            room.store.register(
                {"session_id": f"s-{name}", "state": "idle", "transcript_path": str(path)},
                wanted=name,
                explicit=True,
                at=time.time(),
                alive=lambda *_: True,
            )
            timings, read = [], 0
            for _ in range(runs):
                start = time.perf_counter()
                tail = read_tail(str(path), 3)
                timings.append(time.perf_counter() - start)
                read = tail.read
                assert len(tail.turns) == 3
            results[f"{size}MB"] = {
                "size": actual,
                "read_bytes": read,
                "read_median_ms": round(median(timings) * 1e3, 3),
            }
            in_process.append([f"{size} MB", f"{read:,}", ms(median(timings)), ms(p95(timings))])
            argv = [str(venv_script("agent-room")), "peek", name, "--turns", "3", "--tools"]
            commands.append(Command(f"peek {size} MB", argv, env))
        room.close()
        print_table(
            ["transcript", "bytes read", "median ms", "p95 ms"],
            in_process,
            title="read_tail, last 3 turns, in process",
        )
        time_round_robin(commands, runs)
        print_table(
            ["command", "median ms", "p95 ms"],
            [[c.label, ms(median(c.timings)), ms(p95(c.timings))] for c in commands],
            title="as processes",
        )
        for command in commands[1:]:
            key = command.label.removeprefix("peek ").replace(" ", "")
            results[key]["process_median_ms"] = round(median(command.timings) * 1e3, 3)
    largest = results[f"{sizes[-1]}MB"]
    smallest = results[f"{sizes[0]}MB"]
    failures = []
    if largest["read_median_ms"] > READ_BUDGET * 1e3:
        failures.append(f"read_tail of {sizes[-1]} MB took {largest['read_median_ms']} ms")
    if largest["read_bytes"] > BYTES_BUDGET:
        failures.append(f"read_tail read {largest['read_bytes']} bytes of {sizes[-1]} MB")
    if largest["process_median_ms"] > PROCESS_RATIO * smallest["process_median_ms"]:
        failures.append("peek of the largest transcript is slower than 1.5x the smallest")
    write_result("peek", {"sizes_mb": list(sizes), "runs": runs, "results": results})
    for failure in failures:
        print(f"FAIL: {failure}")
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
