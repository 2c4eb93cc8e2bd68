"""Benchmark of ``agent-room hook EVENT``: what every turn of every agent pays.

Run it from the project root::

    .venv/bin/python bench/bench_hook.py            # the full run (about a minute)
    .venv/bin/python bench/bench_hook.py --quick    # a smoke run with small counts

Claude Code starts one ``agent-room hook EVENT`` process per hook event, with the event's
JSON payload on stdin, and waits for it. This benchmark does exactly that with the venv's
``agent-room`` console script and the real payloads recorded from Claude Code
(``tests/fixtures``), in a throw-away room (a temporary ``$AGENT_ROOM_HOME``) with
``AGENT_ROOM_NAME=backend``, ``TMUX_PANE=%1`` and ``CLAUDE_PID`` set to a ``sleep 600``
started for the run, so the hook sees a real live agent process.

All the payloads carry one session id (the recorded SessionStart's; the Notification
payload, recorded from another session, is rewritten to it): one agent's session over
many turns. SessionStart therefore takes the path of a session that is already
registered (the refresh of a resumed or restarted session), not the first registration.

Two scenarios, each in a room of its own:

a. *held*: another process holds the room open (a connection of the bench process that
   has read from it, as the console or the watcher would): the hook's close is not the
   last one, so SQLite neither checkpoints nor deletes the WAL file;
b. *alone*: nobody else has the room open: the hook's close is the last one and
   checkpoints the WAL into the database (and deletes it).

SessionStart, UserPromptSubmit, Notification (permission prompt), Stop and SessionEnd
run as 50 fresh processes each in both rooms, all interleaved in the same rounds (one
untimed warm-up round, then each round in a fresh seeded random order) with three
baselines: ``python -c pass`` (same interpreter, same environment, a payload on stdin
too), ``python -c "import json, sqlite3"`` (the standard library the hook cannot avoid)
and a probe that only imports what the hook imports (``agent_room.cli``,
``agent_room.turn.hooks``, ``agent_room.turn.hooks.handlers``, each step timed inside). Every hook
run is checked: the session's state afterwards, the hook's output, an empty error log (a
hook always exits 0, so a failure would otherwise look like a fast run), and the WAL
file present in (a) and gone in (b).

Then the in-process cost, so that a reader sees import against work: ``run_hook`` called
in-process on a warm interpreter (200 calls per event, both scenarios), the open and
close of the store alone, a breakdown of each hook's median into interpreter, imports,
work and the rest, and the heaviest imports the hook process adds to the bare interpreter
(``python -X importtime``, with the chain that imports each). A warning is printed when a
module on the hook path has no up-to-date ``.pyc`` (it would be compiled by every run).

The budgets: each hook's median at most 3x the bare interpreter's median (same run), and
SessionEnd never over 300 ms. The exit code is 1 when a budget fails. Results go to
``bench/results/hook.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    Command,
    CommandFailed,
    Stats,
    bench_env,
    git_state,
    median,
    ms,
    parse_importtime,
    print_table,
    progress,
    run_once,
    stale_bytecode,
    time_round_robin,
    venv_python,
    venv_script,
    with_given,
    write_result,
)

RATIO_BUDGET = 3.0
"""Each hook's median per process, at most this many times the bare interpreter's."""
SESSION_END_MAX_MS = 300.0
"""SessionEnd, never slower than this (Claude Code gives it 1.5 s in all)."""

FIXTURES = ROOT / "tests" / "fixtures"
"""The payloads captured from the real client (copied unedited into the tests)."""
NAME = "backend"
PANE = "%1"
BASELINE = "python -c pass"
SHUFFLE_SEED = 20250
"""Each round runs the commands in a fresh random order (seeded: the same every run)."""
FLOOR = "python -c 'import json, sqlite3'"
"""The standard library the hook cannot do without: its floor, short of another design."""
IMPORTS = "python: the hook's imports only"
IMPORT_PROBE = """
import time
t0 = time.perf_counter()
import agent_room.cli
t1 = time.perf_counter()
import agent_room.turn.hooks
t2 = time.perf_counter()
import agent_room.turn.hooks.handlers
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""
"""What the console script and the hook import, with no work: each step timed inside."""
IMPORT_STEPS = ("agent_room.cli", "+ agent_room.turn.hooks", "+ agent_room.turn.hooks.handlers")


@dataclass(frozen=True)
class Event:
    """One hook event: its recorded payload and what it leaves in the room."""

    name: str
    fixture: str
    """The payload, relative to the fixtures folder."""
    state: str
    """The session's state after the hook."""
    prints: bool
    """Whether the hook writes its JSON output on stdout."""


EVENTS = (
    Event("SessionStart", "claude-code-2.1.330/hook-SessionStart-startup.json", "idle", True),
    Event("UserPromptSubmit", "claude-code-2.1.330/hook-UserPromptSubmit.json", "busy", False),
    Event(
        "Notification",
        "claude-code-2.1.197/hook-Notification-permission_prompt.json",
        "waiting",
        False,
    ),
    Event("Stop", "claude-code-2.1.330/hook-Stop.json", "idle", False),
    Event("SessionEnd", "claude-code-2.1.330/hook-SessionEnd-other.json", "ended", False),
)


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    held: bool
    """Whether the bench process keeps a connection to the room open."""


SCENARIOS = (
    Scenario("held", "a. another connection holds the room open", held=True),
    Scenario("alone", "b. nobody else has the room open (close checkpoints the WAL)", held=False),
)


@dataclass(frozen=True)
class Sizes:
    """How much work each part does."""

    runs: int
    calls: int
    importtime_runs: int

    @classmethod
    def full(cls) -> Sizes:
        return cls(runs=50, calls=200, importtime_runs=10)

    @classmethod
    def quick(cls) -> Sizes:
        return cls(runs=5, calls=20, importtime_runs=3)


# -- payloads, rooms, the agent process ----------------------------------------------


def load_payloads(fixtures: Path) -> tuple[str, dict[str, bytes]]:
    """The recorded payloads, all rewritten to the SessionStart's session id."""
    raw = {e.name: json.loads((fixtures / e.fixture).read_text(encoding="utf-8")) for e in EVENTS}
    session_id = str(raw["SessionStart"]["session_id"])
    payloads = {}
    for event in EVENTS:
        data = raw[event.name]
        if data.get("hook_event_name") != event.name:
            raise SystemExit(f"{event.fixture} is not a {event.name} payload")
        data["session_id"] = session_id
        payloads[event.name] = json.dumps(data, indent=2).encode()
    return session_id, payloads


@contextlib.contextmanager
def agent_process() -> Iterator[int]:
    """A live process for ``CLAUDE_PID`` (``sleep 600``); ended by its own handle."""
    proc = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
    try:
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def hook_env(home: Path, agent_pid: int) -> dict[str, str]:
    return bench_env(home, AGENT_ROOM_NAME=NAME, TMUX_PANE=PANE, CLAUDE_PID=str(agent_pid))


def hook_argv(event: str) -> list[str]:
    return [str(venv_script("agent-room")), "hook", event]


def errors_logged(home: Path) -> str | None:
    """The last line of the room's error log, if the hooks logged anything."""
    log = home / "errors.log"
    if not log.exists() or log.stat().st_size == 0:
        return None
    return log.read_text(encoding="utf-8", errors="replace").splitlines()[-1]


def session_state(db: Path, session_id: str, keeper: sqlite3.Connection | None) -> str | None:
    """The session's state: through the open connection in (a); in (b), where the hook
    has just checkpointed the WAL away, from the database file alone (``immutable``: no
    lock, no WAL index, no checkpoint of its own, nothing left behind for the next run).
    """
    conn = (
        keeper
        if keeper is not None
        else sqlite3.connect(f"file:{db}?immutable=1", uri=True, isolation_level=None)
    )
    try:
        # fetchall, not fetchone: a statement left unfinished would hold a read snapshot
        found = conn.execute(
            "SELECT state FROM sessions WHERE session_id = $1", (session_id,)
        ).fetchall()
    finally:
        if keeper is None:
            conn.close()
    return str(found[0][0]) if found else None


def check_hook(
    event: Event, home: Path, session_id: str, keeper: sqlite3.Connection | None
) -> Callable[[subprocess.CompletedProcess[bytes]], None]:
    """A check that the hook did its work, so that a timing never measures a failure."""
    db = home / "room.db"
    wal = home / "room.db-wal"

    def check(result: subprocess.CompletedProcess[bytes]) -> None:
        logged = errors_logged(home)
        if logged:
            raise CommandFailed(f"hook {event.name} logged an error: {logged}")
        out = result.stdout.decode()
        if event.prints:
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
            if not context.startswith(f"[agent-room] You are @{NAME}"):
                raise CommandFailed(f"hook {event.name} printed {out[:200]!r}")
        elif out.strip():
            raise CommandFailed(f"hook {event.name} printed {out[:200]!r}")
        # checked before the state query, which opens a connection of its own in (b)
        if wal.exists() != (keeper is not None):
            raise CommandFailed(
                f"after {event.name} the WAL file is {'there' if wal.exists() else 'gone'}:"
                " the scenario is not what it says"
            )
        state = session_state(db, session_id, keeper)
        if state != event.state:
            raise CommandFailed(f"after {event.name} the session is {state!r}, not {event.state}")

    return check


def room_facts(home: Path) -> dict[str, Any]:
    """The room after a scenario: file sizes and row counts."""
    db, wal = home / "room.db", home / "room.db-wal"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        counts = {
            table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
            for table in ("sessions", "turns", "events")
        }
    finally:
        conn.close()
    return {
        "db_bytes": db.stat().st_size,
        "wal_bytes": wal.stat().st_size if wal.exists() else None,
        "rows": counts,
    }


# -- whole process -------------------------------------------------------------------


def hook_label(scenario: Scenario, event: Event) -> str:
    return f"{scenario.key}: hook {event.name}"


def baseline_commands(
    env: dict[str, str], stdin: bytes, import_samples: list[list[float]]
) -> list[Command]:
    """The bare interpreter, the standard-library floor and the import probe."""
    python = str(venv_python())
    return [
        # the same interpreter and environment, and a payload on stdin like the hooks
        Command(BASELINE, [python, "-c", "pass"], env, stdin=stdin),
        Command(FLOOR, [python, "-c", "import json, sqlite3"], env, stdin=stdin),
        Command(
            IMPORTS,
            [python, "-c", IMPORT_PROBE],
            env,
            check=record_import_steps(import_samples),
            stdin=stdin,
        ),
    ]


def hook_commands(
    scenario: Scenario,
    home: Path,
    env: dict[str, str],
    session_id: str,
    payloads: Mapping[str, bytes],
    keeper: sqlite3.Connection | None,
) -> list[Command]:
    commands = [
        Command(
            hook_label(scenario, e),
            hook_argv(e.name),
            env,
            check=check_hook(e, home, session_id, keeper),
            stdin=payloads[e.name],
        )
        for e in EVENTS
    ]
    for event, command in zip(EVENTS, commands, strict=True):
        if event.name == "UserPromptSubmit":
            command.setup = fresh_prompt(command, payloads[event.name])
    return commands


def fresh_prompt(command: Command, payload: bytes) -> Callable[[], None]:
    """Before each run, the prompt with an id of its own, as every prompt of a session
    has: the hook handles an event once, so a prompt id seen before starts no turn."""
    data = json.loads(payload)
    runs = itertools.count(1)

    def setup() -> None:
        command.stdin = json.dumps({**data, "prompt_id": f"bench-{next(runs)}"}).encode()

    return setup


# -- in process ----------------------------------------------------------------------


def record_import_steps(
    samples: list[list[float]],
) -> Callable[[subprocess.CompletedProcess[bytes]], None]:
    """A check of the import probe that keeps the step timings it printed."""

    def check(result: subprocess.CompletedProcess[bytes]) -> None:
        values = [float(v) for v in result.stdout.split()]
        if len(values) != len(IMPORT_STEPS):
            raise CommandFailed(f"the import probe printed {result.stdout[:200]!r}")
        for i, value in enumerate(values):
            samples[i].append(value)

    return check


def import_steps(samples: list[list[float]]) -> dict[str, Stats]:
    """The probe's step timings (the first is the warm-up round's) and their sum."""
    kept = [values[1:] for values in samples]
    stats = {label: Stats.of(values) for label, values in zip(IMPORT_STEPS, kept, strict=True)}
    stats["all the hook's imports"] = Stats.of([sum(s) for s in zip(*kept, strict=True)])
    return stats


def time_run_hook(
    env: Mapping[str, str], payloads: Mapping[str, bytes], calls: int
) -> dict[str, Stats]:
    """``run_hook`` in this (warm) interpreter, round-robin over the events."""
    import agent_room.turn.hooks.handlers  # noqa: F401 - warm: the import is timed apart
    from agent_room.turn.hooks import run_hook

    timings: dict[str, list[float]] = {e.name: [] for e in EVENTS}
    with contextlib.redirect_stdout(io.StringIO()):
        for round_no in range(1 + calls):
            for event in EVENTS:
                stdin = io.BytesIO(payloads[event.name])
                start = time.perf_counter()
                run_hook([event.name], env, stdin)
                elapsed = time.perf_counter() - start
                if round_no:
                    timings[event.name].append(elapsed)
    return {name: Stats.of(values) for name, values in timings.items()}


def time_open_close(home: Path, calls: int) -> Stats:
    """Open and close the room's store, as every hook does around its work."""
    from agent_room.turn.store.sqlite import SqliteStore

    timings = []
    for _ in range(1 + calls):
        start = time.perf_counter()
        SqliteStore(home, timeout=3.0).close()
        timings.append(time.perf_counter() - start)
    return Stats.of(timings[1:])


def import_profile(
    env: Mapping[str, str], payload: bytes, runs: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The imports the hook process adds to a bare interpreter (``-X importtime``).

    Returns the added modules by median self time, and the package's own modules with
    their cumulative times.
    """
    python = str(venv_python())
    hook = [python, "-X", "importtime", str(venv_script("agent-room")), "hook", "UserPromptSubmit"]
    bare = [python, "-X", "importtime", "-c", "pass"]
    baseline: set[str] = set()
    own: dict[str, list[int]] = {}
    cumulative: dict[str, list[int]] = {}
    importers: dict[str, tuple[str, ...]] = {}
    for _ in range(runs):
        _, result = run_once(bare, env)
        baseline |= set(parse_importtime(result.stderr.decode()))
        _, result = run_once(hook, env, stdin=payload)
        for module, (self_us, total_us, via) in parse_importtime(result.stderr.decode()).items():
            own.setdefault(module, []).append(self_us)
            cumulative.setdefault(module, []).append(total_us)
            importers[module] = via

    def row(module: str) -> dict[str, Any]:
        return {
            "module": module,
            "self_ms": round(median(own[module]) / 1e3, 2),
            "cumulative_ms": round(median(cumulative[module]) / 1e3, 2),
            "imported_via": list(importers[module]),
        }

    added = sorted(
        (m for m in own if m not in baseline), key=lambda m: median(own[m]), reverse=True
    )
    package = sorted(
        (m for m in own if m.startswith("agent_room")),
        key=lambda m: median(cumulative[m]),
        reverse=True,
    )
    return [row(m) for m in added], [row(m) for m in package]


# -- report --------------------------------------------------------------------------


def budget_checks(stats: Mapping[str, Stats]) -> list[dict[str, Any]]:
    base = stats[BASELINE].median
    checks = []
    for scenario in SCENARIOS:
        for event in EVENTS:
            s = stats[hook_label(scenario, event)]
            checks.append(
                {
                    "scenario": scenario.key,
                    "event": event.name,
                    "what": f"median <= {RATIO_BUDGET:g}x python -c pass",
                    "value_ms": round(s.median * 1e3, 3),
                    "limit_ms": round(base * RATIO_BUDGET * 1e3, 3),
                    "ratio": round(s.median / base, 2),
                    "pass": s.median <= base * RATIO_BUDGET,
                }
            )
            if event.name == "SessionEnd":
                checks.append(
                    {
                        "scenario": scenario.key,
                        "event": event.name,
                        "what": f"max <= {SESSION_END_MAX_MS:g} ms",
                        "value_ms": round(s.maximum * 1e3, 3),
                        "limit_ms": SESSION_END_MAX_MS,
                        "pass": s.maximum * 1e3 <= SESSION_END_MAX_MS,
                    }
                )
    return checks


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_process(stats: Mapping[str, Stats], checks: list[dict[str, Any]], runs: int) -> None:
    base = stats[BASELINE].median
    ratio_ok = {
        f"{c['scenario']}: hook {c['event']}": c["pass"] for c in checks if "median" in c["what"]
    }
    max_ok = {
        f"{c['scenario']}: hook {c['event']}": c["pass"] for c in checks if "max" in c["what"]
    }
    rows = [
        [
            label,
            ms(s.median),
            ms(s.p95),
            ms(s.maximum),
            f"{s.median / base:.2f}x",
            verdict(ratio_ok[label]) if label in ratio_ok else "",
            verdict(max_ok[label]) if label in max_ok else "",
        ]
        for label, s in stats.items()
    ]
    print_table(
        [
            "command",
            "median ms",
            "p95 ms",
            "max ms",
            "x python",
            f"median <={RATIO_BUDGET:g}x",
            f"max <={SESSION_END_MAX_MS:g} ms",
        ],
        rows,
        title=(
            f"Whole process, {runs} runs each, all {len(stats)} commands interleaved in"
            " random order per round"
        ),
    )
    for scenario in SCENARIOS:
        print(f"  {scenario.key}: {scenario.title}")


def print_in_process(
    imports: Mapping[str, Stats],
    in_process: Mapping[str, Mapping[str, Stats]],
    open_close: Mapping[str, Stats],
    sizes: Sizes,
) -> None:
    print_table(
        ["import, timed inside the probe", "median ms", "p95 ms"],
        [[label, f"{s.median * 1e3:.2f}", f"{s.p95 * 1e3:.2f}"] for label, s in imports.items()],
        title=f"Import cost of the hook path: inside the '{IMPORTS}' runs above",
    )
    keys = [s.key for s in SCENARIOS]
    rows = [
        [
            f"run_hook {event.name}",
            *[f"{in_process[k][event.name].median * 1e3:.2f}" for k in keys],
            *[f"{in_process[k][event.name].p95 * 1e3:.2f}" for k in keys],
        ]
        for event in EVENTS
    ]
    rows.append(
        [
            "  of which: open + close the store",
            *[f"{open_close[k].median * 1e3:.2f}" for k in keys],
            *[f"{open_close[k].p95 * 1e3:.2f}" for k in keys],
        ]
    )
    print_table(
        ["in-process, warm interpreter", *[f"median ms ({k})" for k in keys]]
        + [f"p95 ms ({k})" for k in keys],
        rows,
        title=f"The hook's work without start-up or imports, {sizes.calls} calls per event",
    )


def print_breakdown(
    process: Mapping[str, Stats],
    in_process: Mapping[str, Mapping[str, Stats]],
) -> list[dict[str, Any]]:
    """Where a hook process's time goes: interpreter, imports, work, the rest.

    All from the same rounds: the imports are the import probe's process median less the
    bare interpreter's; the work is ``run_hook`` on a warm interpreter.
    """
    rows, data = [], []
    base = process[BASELINE].median
    imported = process[IMPORTS].median - base
    for scenario in SCENARIOS:
        for event in EVENTS:
            total = process[hook_label(scenario, event)].median
            work = in_process[scenario.key][event.name].median
            rest = total - base - imported - work
            rows.append(
                [
                    f"{scenario.key}: {event.name}",
                    ms(total),
                    ms(base),
                    ms(imported),
                    ms(work),
                    ms(rest),
                ]
            )
            data.append(
                {
                    "scenario": scenario.key,
                    "event": event.name,
                    "process_ms": round(total * 1e3, 3),
                    "interpreter_ms": round(base * 1e3, 3),
                    "imports_ms": round(imported * 1e3, 3),
                    "warm_work_ms": round(work * 1e3, 3),
                    "rest_ms": round(rest * 1e3, 3),
                }
            )
    print_table(
        ["hook (medians)", "process", "= python", "+ imports", "+ warm work", "+ rest"],
        rows,
        title=(
            "Where a hook process's time goes, ms (imports: the import probe less python;"
            " rest: first calls in a cold process, reading stdin, exit)"
        ),
    )
    return data


def print_imports(added: list[dict[str, Any]], package: list[dict[str, Any]]) -> None:
    def via(row: Mapping[str, Any]) -> str:
        chain = list(row["imported_via"])
        return " > ".join(chain[-3:]) if chain else "(top level)"

    total = sum(float(r["self_ms"]) for r in added)
    own = [r for r in added if str(r["module"]).startswith("agent_room")]
    own_total = sum(float(r["self_ms"]) for r in own)
    print_table(
        ["module", "self ms", "cumulative ms", "imported via (nearest last)"],
        [
            [r["module"], f"{r['self_ms']:.2f}", f"{r['cumulative_ms']:.2f}", via(r)]
            for r in added[:15]
        ],
        title=(
            f"Heaviest imports the hook process adds to python -c pass (-X importtime,"
            f" median self time; {len(added)} modules, {total:.1f} ms self time in all)"
        ),
    )
    print_table(
        ["package module", "cumulative ms", "self ms"],
        [[r["module"], f"{r['cumulative_ms']:.2f}", f"{r['self_ms']:.2f}"] for r in package[:10]],
        title=(
            f"The package's own modules on the hook path: {len(own)} modules,"
            f" {own_total:.1f} ms self time in all (cumulative includes what they import)"
        ),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--runs", type=int, help="processes per event and scenario")
    parser.add_argument("--calls", type=int, help="in-process run_hook calls per event")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="recorded payloads")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes.full()
    sizes = with_given(sizes, runs=args.runs, calls=args.calls)

    step = progress(args.quiet)

    session_id, payloads = load_payloads(args.fixtures)
    print(
        f"agent-room hook benchmark{' (quick)' if args.quick else ''}: sqlite "
        f"{sqlite3.sqlite_version}, {venv_script('agent-room')}"
    )

    import agent_room.turn.hooks.handlers  # noqa: F401 - loads the whole hook path

    stale = stale_bytecode()
    in_process: dict[str, dict[str, Stats]] = {}
    open_close: dict[str, Stats] = {}
    rooms: dict[str, dict[str, Any]] = {}
    keepers: list[sqlite3.Connection] = []
    with (
        tempfile.TemporaryDirectory(prefix="agent-room-bench-hook-") as tmp,
        agent_process() as agent_pid,
    ):
        scratch = Path(tmp)
        envs = {s.key: hook_env(scratch / s.key / "room", agent_pid) for s in SCENARIOS}
        samples: list[list[float]] = [[] for _ in IMPORT_STEPS]
        commands = baseline_commands(envs[SCENARIOS[0].key], payloads["UserPromptSubmit"], samples)
        try:
            for scenario in SCENARIOS:
                home = scratch / scenario.key / "room"
                env = envs[scenario.key]
                # the room exists, the session registered, before anyone holds it open
                run_once(hook_argv("SessionStart"), env, stdin=payloads["SessionStart"])
                keeper: sqlite3.Connection | None = None
                if scenario.held:
                    keeper = sqlite3.connect(home / "room.db", isolation_level=None)
                    keepers.append(keeper)
                    # a read maps the WAL index: the connection now counts as holding it
                    keeper.execute("SELECT count(*) FROM sessions").fetchall()
                commands += hook_commands(scenario, home, env, session_id, payloads, keeper)
            step(f"whole process: {len(commands)} commands x {sizes.runs} runs, interleaved")
            time_round_robin(commands, sizes.runs, shuffle_seed=SHUFFLE_SEED)
            for scenario in SCENARIOS:
                home = scratch / scenario.key / "room"
                if not scenario.held:
                    for keeper in keepers:
                        keeper.close()
                    keepers.clear()
                step(f"{scenario.title}: run_hook in-process, {sizes.calls} calls per event")
                in_process[scenario.key] = time_run_hook(envs[scenario.key], payloads, sizes.calls)
                open_close[scenario.key] = time_open_close(home, sizes.calls)
                logged = errors_logged(home)
                if logged:
                    raise CommandFailed(f"in-process run_hook logged an error: {logged}")
        finally:
            for keeper in keepers:
                keeper.close()
        for scenario in SCENARIOS:
            rooms[scenario.key] = room_facts(scratch / scenario.key / "room")

        step(f"python -X importtime of the hook process, {sizes.importtime_runs} runs")
        added, package = import_profile(
            hook_env(scratch / "importtime" / "room", agent_pid),
            payloads["UserPromptSubmit"],
            sizes.importtime_runs,
        )
    stale = sorted(set(stale) | set(stale_bytecode()))  # the package may change meanwhile
    process = {c.label: Stats.of(c.timings) for c in commands}
    imports = import_steps(samples)
    checks = budget_checks(process)

    print_process(process, checks, sizes.runs)
    print_in_process(imports, in_process, open_close, sizes)
    breakdown = print_breakdown(process, in_process)
    print_imports(added, package)

    if stale:
        print(
            "\nWARNING: no up-to-date .pyc for "
            + ", ".join(stale)
            + ": every process compiled them again, so the timings above are inflated"
            + (
                " (PYTHONDONTWRITEBYTECODE is set)"
                if os.environ.get("PYTHONDONTWRITEBYTECODE")
                else ""
            )
        )
    ok = all(c["pass"] for c in checks)
    failed = [f"{c['scenario']}: {c['event']} {c['what']}" for c in checks if not c["pass"]]
    print(
        f"\nBudgets (each hook's median <= {RATIO_BUDGET:g}x python -c pass; SessionEnd max <="
        f" {SESSION_END_MAX_MS:g} ms): {verdict(ok)}"
        + (" (quick run: few runs)" if args.quick else "")
    )
    for line in failed:
        print(f"  FAIL {line}")

    data = {
        "quick": args.quick,
        "sizes": asdict(sizes),
        "git": git_state(),
        "session": {
            "session_id": session_id,
            "reused": True,
            "note": "one session id for every event and run: SessionStart refreshes a"
            " registered session",
            "env": {"AGENT_ROOM_NAME": NAME, "TMUX_PANE": PANE, "CLAUDE_PID": "a sleep 600"},
            "fixtures": {e.name: e.fixture for e in EVENTS},
        },
        "commands": {
            label: {**st.as_ms(), "ratio_to_python": round(st.median / process[BASELINE].median, 2)}
            for label, st in process.items()
        },
        "scenarios": {
            s.key: {
                "title": s.title,
                "held_open": s.held,
                "in_process_run_hook": {k: v.as_ms() for k, v in in_process[s.key].items()},
                "in_process_open_close": open_close[s.key].as_ms(),
                "room_after": rooms[s.key],
            }
            for s in SCENARIOS
        },
        "import_steps": {label: st.as_ms() for label, st in imports.items()},
        "bytecode_not_cached": stale,
        "breakdown": breakdown,
        "importtime_added": added,
        "importtime_package": package,
        "budget": {
            "ratio": RATIO_BUDGET,
            "session_end_max_ms": SESSION_END_MAX_MS,
            "checks": checks,
            "pass": ok,
        },
    }
    path = write_result("hook", data)
    print(f"Results: {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
