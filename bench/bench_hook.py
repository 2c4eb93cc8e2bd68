"""Benchmark of ``agent-room hook EVENT``: what every turn of every agent pays.

Run it from the project root::

    .venv/bin/python bench/bench_hook.py            # the full run (about a minute)
    .venv/bin/python bench/bench_hook.py --quick    # a smoke run with small counts

Claude Code starts one ``agent-room hook EVENT`` process per hook event, with the event's
JSON payload on stdin, and waits for it. This benchmark does exactly that with the venv's
``agent-room`` console script and the real payloads recorded from Claude Code
(``/work/shared/fixtures``), in a throw-away room (a temporary ``$AGENT_ROOM_HOME``) with
``AGENT_ROOM_NAME=backend``, ``TMUX_PANE=%1`` and ``CLAUDE_PID`` set to a ``sleep 600``
started for the run, so the hook sees a real live agent process.

All the payloads carry one session id (the recorded SessionStart's; the Notification
payload, recorded from another session, is rewritten to it): one agent's session over
many turns. SessionStart therefore takes the path of a session that is already
registered (the refresh of a resumed or restarted session), not the first registration.

Two scenarios, each with its own ``python -c pass`` baseline in the same rounds:

a. another process holds the room open (a connection of the bench process that has read
   from it, as the console or the watcher would): the hook's close is not the last one,
   so SQLite neither checkpoints nor deletes the WAL file;
b. nobody else has the room open: the hook's close is the last one and checkpoints the
   WAL into the database (and deletes it).

Each scenario times SessionStart, UserPromptSubmit, Notification (permission prompt),
Stop and SessionEnd as 50 fresh processes each, interleaved round-robin with the bare
interpreter after one untimed warm-up round. Every run is checked: the session's state
afterwards, the hook's output, an empty error log (a hook always exits 0, so a failure
would otherwise look like a fast run), and the WAL file present in (a) and gone in (b).

Then the in-process cost, so that a reader sees import against work: the import time of
the hook's modules in a fresh interpreter, ``run_hook`` called in-process on a warm
interpreter (200 calls per event, both scenarios), and the heaviest imports the hook
process adds to the bare interpreter (``python -X importtime``).

The budgets: each hook's median at most 3x the bare interpreter's median (same run), and
SessionEnd never over 300 ms. The exit code is 1 when a budget fails. Results go to
``bench/results/hook.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sqlite3
import subprocess
import sys
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
    median,
    ms,
    print_table,
    run_once,
    time_round_robin,
    venv_python,
    venv_script,
    write_result,
)

RATIO_BUDGET = 3.0
"""Each hook's median per process, at most this many times the bare interpreter's."""
SESSION_END_MAX_MS = 300.0
"""SessionEnd, never slower than this (Claude Code gives it 1.5 s in all)."""

FIXTURES = Path("/work/shared/fixtures")
NAME = "backend"
PANE = "%1"
BASELINE = "python -c pass"


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
    import_runs: int
    importtime_runs: int

    @classmethod
    def full(cls) -> Sizes:
        return cls(runs=50, calls=200, import_runs=20, importtime_runs=10)

    @classmethod
    def quick(cls) -> Sizes:
        return cls(runs=5, calls=20, import_runs=5, importtime_runs=3)


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
    conn = keeper if keeper is not None else sqlite3.connect(db, isolation_level=None)
    try:
        # fetchall, not fetchone: a statement left unfinished would hold a read snapshot
        found = conn.execute(
            "SELECT state FROM sessions WHERE session_id = ?", (session_id,)
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


def scenario_commands(
    home: Path,
    env: dict[str, str],
    session_id: str,
    payloads: Mapping[str, bytes],
    keeper: sqlite3.Connection | None,
) -> list[Command]:
    python = str(venv_python())
    commands = [
        # the same interpreter and environment, and a payload on stdin like the hooks
        Command(BASELINE, [python, "-c", "pass"], env, stdin=payloads["UserPromptSubmit"])
    ]
    commands += [
        Command(
            f"hook {e.name}",
            hook_argv(e.name),
            env,
            check=check_hook(e, home, session_id, keeper),
            stdin=payloads[e.name],
        )
        for e in EVENTS
    ]
    return commands


# -- in process ----------------------------------------------------------------------

IMPORT_PROBE = """
import time
t0 = time.perf_counter()
import agent_room.cli
t1 = time.perf_counter()
import agent_room.hooks
t2 = time.perf_counter()
import agent_room.hooks.handlers
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""
IMPORT_STEPS = ("agent_room.cli", "+ agent_room.hooks", "+ agent_room.hooks.handlers")


def import_costs(env: Mapping[str, str], runs: int) -> dict[str, Stats]:
    """The hook path's imports, timed inside fresh interpreters, one step after another."""
    samples: list[list[float]] = [[] for _ in IMPORT_STEPS]
    for _ in range(runs):
        _, result = run_once([str(venv_python()), "-c", IMPORT_PROBE], env)
        for i, value in enumerate(result.stdout.split()):
            samples[i].append(float(value))
    stats = {label: Stats.of(values) for label, values in zip(IMPORT_STEPS, samples, strict=True)}
    totals = [sum(step) for step in zip(*samples, strict=True)]
    stats["all the hook's imports"] = Stats.of(totals)
    return stats


def time_run_hook(
    env: Mapping[str, str], payloads: Mapping[str, bytes], calls: int
) -> dict[str, Stats]:
    """``run_hook`` in this (warm) interpreter, round-robin over the events."""
    import agent_room.hooks.handlers  # noqa: F401 - warm: the import is timed apart
    from agent_room.hooks import run_hook

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
    from agent_room.store.sqlite import SqliteStore

    timings = []
    for _ in range(1 + calls):
        start = time.perf_counter()
        SqliteStore(home, timeout=3.0).close()
        timings.append(time.perf_counter() - start)
    return Stats.of(timings[1:])


def parse_importtime(stderr: str) -> dict[str, tuple[int, int, tuple[str, ...]]]:
    """``-X importtime`` lines as module -> (self us, cumulative us, importers root first).

    The lines come children first; a module's importer is the next line one level up.
    """
    entries: list[tuple[str, int, int, int]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, total, name = line.removeprefix("import time:").split("|")
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        entries.append((name.strip(), depth, int(own), int(total)))
    parsed: dict[str, tuple[int, int, tuple[str, ...]]] = {}
    chain: dict[int, str] = {}
    for module, depth, own, total in reversed(entries):
        chain[depth] = module
        importers = tuple(chain[d] for d in range(depth) if d in chain)
        parsed[module] = (own, total, importers)
    return parsed


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


def budget_checks(scenario: Scenario, stats: Mapping[str, Stats]) -> list[dict[str, Any]]:
    base = stats[BASELINE].median
    checks = []
    for event in EVENTS:
        s = stats[f"hook {event.name}"]
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


def print_scenario(
    scenario: Scenario, stats: Mapping[str, Stats], checks: list[dict[str, Any]], runs: int
) -> None:
    base = stats[BASELINE].median
    ratio_ok = {c["event"]: c["pass"] for c in checks if "median" in c["what"]}
    max_ok = {c["event"]: c["pass"] for c in checks if "max" in c["what"]}
    rows = []
    for label, s in stats.items():
        event = label.removeprefix("hook ")
        rows.append(
            [
                label,
                ms(s.median),
                ms(s.p95),
                ms(s.maximum),
                f"{s.median / base:.2f}x",
                verdict(ratio_ok[event]) if event in ratio_ok else "",
                verdict(max_ok[event]) if event in max_ok else "",
            ]
        )
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
        title=f"{scenario.title}: whole process, {runs} runs each, round-robin",
    )


def print_in_process(
    imports: Mapping[str, Stats],
    in_process: Mapping[str, Mapping[str, Stats]],
    open_close: Mapping[str, Stats],
    sizes: Sizes,
) -> None:
    print_table(
        ["import (fresh interpreter, after site)", "median ms", "p95 ms"],
        [[label, ms(s.median), ms(s.p95)] for label, s in imports.items()],
        title=f"Import cost of the hook path, {sizes.import_runs} fresh interpreters",
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
    process: Mapping[str, Mapping[str, Stats]],
    imports: Mapping[str, Stats],
    in_process: Mapping[str, Mapping[str, Stats]],
) -> list[dict[str, Any]]:
    """Where a hook process's time goes: interpreter, imports, work, the rest."""
    imported = imports["all the hook's imports"].median
    rows, data = [], []
    for scenario in SCENARIOS:
        stats = process[scenario.key]
        base = stats[BASELINE].median
        for event in EVENTS:
            total = stats[f"hook {event.name}"].median
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
            "Where a hook process's time goes, ms (rest: first-call costs in a cold process,"
            " stdin, exit)"
        ),
    )
    return data


def print_imports(added: list[dict[str, Any]], package: list[dict[str, Any]]) -> None:
    def via(row: Mapping[str, Any]) -> str:
        chain = list(row["imported_via"])
        return " > ".join(chain[-3:]) if chain else "(top level)"

    total = sum(float(r["self_ms"]) for r in added)
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
        title="The package's own modules on the hook path (cumulative includes what they import)",
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
    if args.runs or args.calls:
        sizes = Sizes(
            **{
                **asdict(sizes),
                **({"runs": args.runs} if args.runs else {}),
                **({"calls": args.calls} if args.calls else {}),
            }
        )

    def step(text: str) -> None:
        if not args.quiet:
            print(f"... {text}", file=sys.stderr, flush=True)

    session_id, payloads = load_payloads(args.fixtures)
    print(
        f"agent-room hook benchmark{' (quick)' if args.quick else ''}: sqlite "
        f"{sqlite3.sqlite_version}, {venv_script('agent-room')}"
    )

    process: dict[str, dict[str, Stats]] = {}
    in_process: dict[str, dict[str, Stats]] = {}
    open_close: dict[str, Stats] = {}
    rooms: dict[str, dict[str, Any]] = {}
    checks: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="agent-room-bench-hook-") as tmp,
        agent_process() as agent_pid,
    ):
        scratch = Path(tmp)
        for scenario in SCENARIOS:
            home = scratch / scenario.key / "room"
            env = hook_env(home, agent_pid)
            # the room exists (and the session is registered) before anyone holds it open
            run_once(hook_argv("SessionStart"), env, stdin=payloads["SessionStart"])
            keeper: sqlite3.Connection | None = None
            if scenario.held:
                keeper = sqlite3.connect(home / "room.db", isolation_level=None)
                # a read maps the WAL index: the connection now counts as one holding it
                keeper.execute("SELECT count(*) FROM sessions").fetchall()
            try:
                commands = scenario_commands(home, env, session_id, payloads, keeper)
                step(f"{scenario.title}: {len(commands)} commands x {sizes.runs} runs")
                time_round_robin(commands, sizes.runs)
                process[scenario.key] = {c.label: Stats.of(c.timings) for c in commands}
                step(f"{scenario.title}: run_hook in-process, {sizes.calls} calls per event")
                in_process[scenario.key] = time_run_hook(env, payloads, sizes.calls)
                open_close[scenario.key] = time_open_close(home, sizes.calls)
                logged = errors_logged(home)
                if logged:
                    raise CommandFailed(f"in-process run_hook logged an error: {logged}")
            finally:
                if keeper is not None:
                    keeper.close()
            rooms[scenario.key] = room_facts(home)
            checks += budget_checks(scenario, process[scenario.key])

        step(f"import costs: {sizes.import_runs} fresh interpreters")
        plain_env = hook_env(scratch / "imports" / "room", agent_pid)
        imports = import_costs(plain_env, sizes.import_runs)
        step(f"python -X importtime of the hook process, {sizes.importtime_runs} runs")
        added, package = import_profile(
            plain_env, payloads["UserPromptSubmit"], sizes.importtime_runs
        )

    for scenario in SCENARIOS:
        print_scenario(
            scenario,
            process[scenario.key],
            [c for c in checks if c["scenario"] == scenario.key],
            sizes.runs,
        )
    print_in_process(imports, in_process, open_close, sizes)
    breakdown = print_breakdown(process, imports, in_process)
    print_imports(added, package)

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
        "scenarios": {
            s.key: {
                "title": s.title,
                "held_open": s.held,
                "commands": {
                    label: {
                        **st.as_ms(),
                        "ratio_to_python": round(st.median / process[s.key][BASELINE].median, 2),
                    }
                    for label, st in process[s.key].items()
                },
                "in_process_run_hook": {k: v.as_ms() for k, v in in_process[s.key].items()},
                "in_process_open_close": open_close[s.key].as_ms(),
                "room_after": rooms[s.key],
            }
            for s in SCENARIOS
        },
        "imports": {label: s.as_ms() for label, s in imports.items()},
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
