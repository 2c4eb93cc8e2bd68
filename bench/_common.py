"""Shared helpers of the benchmarks: statistics, whole-process timing, tables, results.

Standard library only, so a benchmark measures the package and not its harness. Every
timed command runs as a fresh process (``subprocess.run``), the way an agent's shell
tool runs ``agent-room``; the time is the wall clock from spawn to exit as the parent
sees it, so it includes interpreter start-up, imports, the work and teardown.
"""

from __future__ import annotations

import json
import math
import os
import platform
import random
import shlex
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
STANDIN = ROOT / "tests" / "standin_agent.py"
"""The stand-in agent: a pane's program that fires the real hooks."""

_STRIPPED_ENV = (
    "AGENT_ROOM_HOME",
    "AGENT_ROOM_NAME",
    "AGENT_ROOM_PARENT",
    "AGENT_ROOM_AGENT",
    "CLAUDE_PID",
    "TMUX",
    "TMUX_PANE",
)
"""Variables of the caller's shell that would point a timed command at a real room (or,
for a hook, at the caller's own agent process)."""


# -- statistics ----------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    """The median; ``nan`` for no values."""
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between ranks (as numpy)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def p95(values: Sequence[float]) -> float:
    """The 95th percentile."""
    return percentile(values, 95.0)


@dataclass(frozen=True)
class Stats:
    """A summary of timings in seconds."""

    runs: int
    median: float
    p95: float
    mean: float
    minimum: float
    maximum: float

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Stats:
        """Summarise a non-empty list of durations in seconds."""
        if not seconds:
            raise ValueError("no timings to summarise")
        return cls(
            runs=len(seconds),
            median=median(seconds),
            p95=p95(seconds),
            mean=statistics.fmean(seconds),
            minimum=min(seconds),
            maximum=max(seconds),
        )

    def as_ms(self) -> dict[str, float | int]:
        """The summary in milliseconds, for the JSON result."""
        return {
            "runs": self.runs,
            "median_ms": round(self.median * 1e3, 3),
            "p95_ms": round(self.p95 * 1e3, 3),
            "mean_ms": round(self.mean * 1e3, 3),
            "min_ms": round(self.minimum * 1e3, 3),
            "max_ms": round(self.maximum * 1e3, 3),
        }


def ms(seconds: float) -> str:
    """Seconds as milliseconds for a table cell."""
    return f"{seconds * 1e3:.1f}"


# -- commands and environments -------------------------------------------------------


_Sizes = TypeVar("_Sizes")


def with_given(sizes: _Sizes, **given: Any) -> _Sizes:
    """``sizes`` (a dataclass) with the options the user gave: those not ``None`` or 0."""
    return replace(sizes, **{k: v for k, v in given.items() if v})  # type: ignore[type-var]


def progress(quiet: bool, prefix: str = "...") -> Callable[[str], None]:
    """A progress line printer on stderr; silent when ``quiet``."""

    def step(text: str) -> None:
        if not quiet:
            print(f"{prefix} {text}", file=sys.stderr, flush=True)

    return step


def venv_python() -> Path:
    """The project's interpreter: ``.venv/bin/python``, else the one running this."""
    candidate = ROOT / ".venv" / "bin" / "python"
    return candidate if candidate.exists() else Path(sys.executable)


def venv_script(name: str) -> Path:
    """A console script of the project's venv, next to its interpreter."""
    candidate = venv_python().parent / name
    if not candidate.exists():
        raise SystemExit(f"{candidate} not found: install the project into .venv first")
    return candidate


def standin_command(home: Path, name: str, *args: str, source: Path = ROOT) -> str:
    """A pane's initial command: the stand-in agent for ``name`` (as tests/tmux/conftest.py),
    its hooks run by ``source``'s code (a revision's worktree, for a baseline)."""
    env = {
        "AGENT_ROOM_HOME": str(home),
        "AGENT_ROOM_NAME": name,
        "PYTHONPATH": str(source),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    argv = [str(venv_python()), str(STANDIN), *args]
    return f"env {assignments} {' '.join(shlex.quote(a) for a in argv)}"


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    """The caller's environment pointed at a throw-away room, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _STRIPPED_ENV}
    env["AGENT_ROOM_HOME"] = str(home)
    env["AGENT_ROOM_WATCH"] = "off"  # a benchmark runs the deliverer it times
    env.update(extra)
    return env


@dataclass
class Command:
    """One command to time as a whole process, with an untimed step before each run."""

    label: str
    argv: list[str]
    env: dict[str, str]
    setup: Callable[[], None] | None = None
    check: Callable[[subprocess.CompletedProcess[bytes]], None] | None = None
    stdin: bytes | None = None
    """Bytes fed to the command's stdin (a hook's payload); ``None`` for /dev/null."""
    timings: list[float] = field(default_factory=list)


class CommandFailed(RuntimeError):
    """A timed command exited non-zero: its timing would be meaningless."""


def run_once(
    argv: Sequence[str], env: Mapping[str, str], *, stdin: bytes | None = None
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Run ``argv`` once as a fresh process; return (seconds, result). Raise on failure.

    ``stdin`` is written to the process's standard input through a pipe (as Claude Code
    hands a hook its payload); without it, stdin is /dev/null.
    """
    feed: dict[str, Any] = {"stdin": subprocess.DEVNULL} if stdin is None else {"input": stdin}
    start = time.perf_counter()
    result = subprocess.run(list(argv), env=dict(env), capture_output=True, check=False, **feed)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise CommandFailed(
            f"{' '.join(argv)} exited {result.returncode}: "
            f"{result.stderr.decode(errors='replace').strip()}"
        )
    return elapsed, result


def time_command(argv: Sequence[str], env: Mapping[str, str], runs: int) -> list[float]:
    """Time ``argv`` over ``runs`` fresh processes, one after the other."""
    return [run_once(argv, env)[0] for _ in range(runs)]


def time_round_robin(
    commands: Sequence[Command], runs: int, *, warmup: int = 1, shuffle_seed: int | None = None
) -> None:
    """Time every command ``runs`` times, interleaved so that noise hits all alike.

    Round ``i`` runs each command once, starting at a rotating offset so that no command
    is always first. The rotation keeps each command's neighbours, though; with
    ``shuffle_seed`` every round runs the commands in a fresh (seeded, reproducible)
    random order instead, so that no command always follows the same one (which matters
    when one command's aftermath, such as a database checkpoint, slows the next).
    ``warmup`` rounds run first untimed (page cache, ``.pyc`` files). Timings accumulate
    in each ``Command.timings``.
    """
    count = len(commands)
    rng = random.Random(shuffle_seed) if shuffle_seed is not None else None
    for round_no in range(warmup + runs):
        offset = round_no % count
        order = (
            rng.sample(list(commands), count)
            if rng is not None
            else [*commands[offset:], *commands[:offset]]
        )
        for command in order:
            if command.setup is not None:
                command.setup()
            elapsed, result = run_once(command.argv, command.env, stdin=command.stdin)
            if command.check is not None:
                command.check(result)
            if round_no >= warmup:
                command.timings.append(elapsed)


# -- output --------------------------------------------------------------------------


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, title: str | None = None
) -> None:
    """Print rows side by side: the first column left-aligned, the others right-aligned."""
    table = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        cells = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    if title:
        print(f"\n{title}")
    print(line(table[0]))
    print("  ".join("-" * w for w in widths))
    for row in table[1:]:
        print(line(row))


def machine_info() -> dict[str, Any]:
    """Where the numbers were taken: they only compare within one machine."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "interpreter": str(venv_python()),
    }


def write_result(name: str, data: Mapping[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` with the machine's description; return it."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    payload = {
        "benchmark": name,
        "when": datetime.now(tz=UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        **data,
    }
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return path


# -- processes and state -------------------------------------------------------------


def wait_until(
    check: Callable[[], Any], *, timeout: float, step: float = 0.005, what: str = "a condition"
) -> Any:
    """Poll ``check`` every ``step`` seconds until it returns something truthy; return it.

    Raise ``TimeoutError`` naming ``what`` after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


def stop_process(proc: subprocess.Popen[Any], *, timeout: float = 10.0) -> int | None:
    """End a process this benchmark started, by its pid: SIGTERM, then SIGKILL; reap it.

    Returns its exit code (``None`` if it could not be reaped).
    """
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return None
    return proc.returncode


def git_state() -> dict[str, Any]:
    """The commit measured and whether the package had uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "agent_room"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "package_modified": None}
    return {"commit": head.strip(), "package_modified": [line[3:] for line in dirty.splitlines()]}


def stale_bytecode(prefix: str = "agent_room") -> list[str]:
    """Modules named ``prefix*`` loaded in this process without an up-to-date ``.pyc``.

    A process that imports such a module compiles it again (and with
    ``PYTHONDONTWRITEBYTECODE`` set, the cache is never refreshed), which inflates every
    timing of it; installed packages have their bytecode compiled at install time.
    """
    import importlib.util

    found = []
    for name, module in sorted(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if not name.startswith(prefix) or not source or not source.endswith(".py"):
            continue
        try:
            header = Path(importlib.util.cache_from_source(source)).read_bytes()[:16]
        except OSError:
            found.append(f"{name} (no .pyc)")
            continue
        st = Path(source).stat()
        flags = int.from_bytes(header[4:8], "little")
        mtime = int.from_bytes(header[8:12], "little")
        size = int.from_bytes(header[12:16], "little")
        if flags == 0 and (mtime, size) != (int(st.st_mtime) & 0xFFFFFFFF, st.st_size):
            found.append(f"{name} (.pyc out of date)")
    return found


def parse_importtime(stderr: str) -> dict[str, tuple[int, int, tuple[str, ...]]]:
    """``-X importtime`` lines as module -> (self us, cumulative us, importers root first).

    The lines come children first; a module's importer is the next line one level up.
    """
    entries: list[tuple[str, int, int, int]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        entries.append((name.strip(), depth, int(self_us), int(cumulative_us)))
    parsed: dict[str, tuple[int, int, tuple[str, ...]]] = {}
    chain: dict[int, str] = {}
    for module, depth, own, total in reversed(entries):
        chain[depth] = module
        importers = tuple(chain[d] for d in range(depth) if d in chain)
        parsed[module] = (own, total, importers)
    return parsed
