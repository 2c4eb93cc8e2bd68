"""Benchmark of the room's message bus: the Python API, ``agent-room`` processes, a big room.

Run it from the project root::

    .venv/bin/python bench/bench_bus.py            # the full run (about a minute)
    .venv/bin/python bench/bench_bus.py --quick    # a smoke run with small counts

Every part runs in a throw-away room (a temporary ``$AGENT_ROOM_HOME``) and never touches
the caller's own room. The parts:

1. in-process: ``Room.send`` in a loop, one process, one connection;
2. whole-process: ``agent-room send`` as fresh processes, one after the other and in
   four parallel streams;
3. a room of 100,000 messages: ``history 20``, ``history 20 --json``, ``inbox --peek``,
   ``inbox`` (reading a fresh batch of 20) and ``who``, each as fresh processes,
   interleaved round-robin with
4. the baselines: ``python -c pass`` and ``python -c "import sqlite3"`` with the same
   interpreter and environment, and the import of the CLI without running a command.

The budget: on the big room, ``history 20`` and ``inbox`` (peek and read) take under
150 ms per process (median); and every parallel send succeeds and is stored (a send
that failed would look like a fast one). The exit code is 1 when either fails.
Results go to ``bench/results/bus.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import (
    Command,
    CommandFailed,
    Stats,
    bench_env,
    median,
    ms,
    print_table,
    progress,
    run_once,
    time_round_robin,
    venv_python,
    venv_script,
    with_given,
    write_result,
)

from agent_room.room.service import Room
from agent_room.turn.store.db import write_transaction

BUDGET_MS = 150.0
"""``history 20`` and ``inbox`` on the big room, per process, median."""

NAMES = ("backend", "frontend", "reader", "drain", "api", "db", "docs", "infra", "qa", "ui")
READER = "reader"
"""Holds ~50 unread messages that are only ever peeked at."""
DRAIN = "drain"
"""Gets a fresh batch of unread messages before each timed ``inbox`` (which reads them)."""

_VOCABULARY = """
schema migration endpoint contract token retry handler fixture payload cache index
review branch commit rebase deploy rollback config flag timeout queue worker lock
session pane hook transcript parser render layout test coverage lint typing
"""
WORDS = _VOCABULARY.split()


@dataclass(frozen=True)
class Sizes:
    """How much work each part does."""

    inproc_messages: int
    seq_processes: int
    streams: int
    per_stream: int
    room_messages: int
    reader_unread: int
    drain_batch: int
    runs: int
    inproc_reads: int

    @classmethod
    def full(cls) -> Sizes:
        return cls(
            inproc_messages=5_000,
            seq_processes=100,
            streams=4,
            per_stream=50,
            room_messages=100_000,
            reader_unread=50,
            drain_batch=20,
            runs=30,
            inproc_reads=200,
        )

    @classmethod
    def quick(cls) -> Sizes:
        return cls(
            inproc_messages=500,
            seq_processes=20,
            streams=4,
            per_stream=5,
            room_messages=10_000,
            reader_unread=50,
            drain_batch=20,
            runs=5,
            inproc_reads=20,
        )


def open_room(home: Path) -> Room:
    """The throw-away room at ``home``, through the package's own ``Room.open``."""
    return Room.open({"AGENT_ROOM_HOME": str(home)})


def body_text(rng: random.Random, index: int) -> str:
    """A message body of 40 to 600 characters, like agents write."""
    words = rng.choices(WORDS, k=rng.randint(6, 90))
    return f"#{index}: " + " ".join(words)


def message_count(home: Path) -> int:
    room = open_room(home)
    try:
        return int(room.store.conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    finally:
        room.close()


# -- 1. in-process -------------------------------------------------------------------


def bench_in_process(home: Path, sizes: Sizes) -> dict[str, Any]:
    """``Room.send`` in a loop on one connection."""
    room = open_room(home)
    room.join("backend")
    room.join("frontend")
    rng = random.Random(1)
    bodies = [body_text(rng, i) for i in range(sizes.inproc_messages)]
    timings: list[float] = []
    start = time.perf_counter()
    for body in bodies:
        t0 = time.perf_counter()
        room.send("backend", "frontend", body)
        timings.append(time.perf_counter() - t0)
    wall = time.perf_counter() - start
    room.close()
    stored = message_count(home)
    if stored != sizes.inproc_messages:
        raise SystemExit(f"in-process: {stored} messages stored, {sizes.inproc_messages} sent")
    stats = Stats.of(timings)
    return {
        "messages": sizes.inproc_messages,
        "wall_s": round(wall, 4),
        "msgs_per_s": round(sizes.inproc_messages / wall, 1),
        "per_message": stats.as_ms(),
    }


# -- 2. whole-process sends ----------------------------------------------------------


def send_argv(recipient: str, index: int) -> list[str]:
    return [
        str(venv_script("agent-room")),
        "send",
        f"@{recipient}",
        f"message {index} of the bench",
    ]


def bench_process_send(home: Path, sizes: Sizes) -> dict[str, Any]:
    """``agent-room send`` as fresh processes, one after the other."""
    room = open_room(home)
    room.join("backend")
    room.join("frontend")
    room.close()  # no connection stays open: each process is on its own, as from a shell
    env = bench_env(home, AGENT_ROOM_NAME="backend")
    run_once(send_argv("frontend", -1), env)  # warm-up: .pyc files, page cache
    timings: list[float] = []
    start = time.perf_counter()
    for i in range(sizes.seq_processes):
        timings.append(run_once(send_argv("frontend", i), env)[0])
    wall = time.perf_counter() - start
    stored = message_count(home)
    if stored != sizes.seq_processes + 1:
        raise SystemExit(f"sequential sends: {stored} stored, {sizes.seq_processes + 1} sent")
    return {
        "processes": sizes.seq_processes,
        "wall_s": round(wall, 4),
        "msgs_per_s": round(sizes.seq_processes / wall, 1),
        "per_process": Stats.of(timings).as_ms(),
        "_stats": Stats.of(timings),
    }


def bench_parallel_send(home: Path, sizes: Sizes) -> dict[str, Any]:
    """``sizes.streams`` shells each sending ``sizes.per_stream`` messages back to back."""
    senders = [f"writer-{n}" for n in range(sizes.streams)]
    room = open_room(home)
    for name in [*senders, "sink"]:
        room.join(name)
    room.close()
    run_once(send_argv("sink", -1), bench_env(home, AGENT_ROOM_NAME=senders[0]))
    lock = threading.Lock()
    timings: list[float] = []
    failures: list[str] = []

    def stream(sender: str) -> None:
        env = bench_env(home, AGENT_ROOM_NAME=sender)
        for i in range(sizes.per_stream):
            try:
                elapsed, _ = run_once(send_argv("sink", i), env)
            except CommandFailed as exc:
                with lock:
                    failures.append(str(exc))
                continue
            with lock:
                timings.append(elapsed)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=sizes.streams) as pool:
        list(pool.map(stream, senders))
    wall = time.perf_counter() - start
    total = sizes.streams * sizes.per_stream
    stored = message_count(home) - 1
    return {
        "streams": sizes.streams,
        "per_stream": sizes.per_stream,
        "processes": total,
        "stored": stored,
        "failures": len(failures),
        "failure_samples": failures[:3],
        "wall_s": round(wall, 4),
        "msgs_per_s": round(stored / wall, 1),
        "per_process": Stats.of(timings).as_ms() if timings else None,
        "_stats": Stats.of(timings) if timings else None,
    }


# -- 3. the big room -----------------------------------------------------------------


def seed_big_room(home: Path, sizes: Sizes) -> dict[str, Any]:
    """Fill a room with ``sizes.room_messages`` messages in one transaction.

    The rows mirror what the room writes itself: chat between the ten names, a handover
    now and then (with its record) and room notices, nearly all of them read, each with
    its ``message.sent`` (and ``message.read``) audit event. ``reader`` keeps
    ``sizes.reader_unread`` unread messages spread through the history; every other name
    but ``drain`` keeps a couple.
    """
    start = time.perf_counter()
    room = open_room(home)
    for name in NAMES:
        room.join(name)
    rng = random.Random(42)
    total = sizes.room_messages
    step = 2.0  # a message every two seconds
    first = time.time() - total * step - 3600
    unread: dict[int, str] = dict.fromkeys(rng.sample(range(total), sizes.reader_unread), READER)
    for name in NAMES:
        if name not in (READER, DRAIN):
            for i in rng.sample(range(total), 2):
                unread.setdefault(i, name)
    others = [n for n in NAMES if n != DRAIN]

    messages: list[tuple[Any, ...]] = []
    handovers: list[tuple[Any, ...]] = []
    events: list[tuple[Any, ...]] = []
    for i in range(total):
        mid = i + 1
        at = first + i * step
        recipient = unread.get(i) or rng.choice(others)
        kind = "chat"
        sender = rng.choice([n for n in others if n != recipient])
        if i % 97 == 0:
            kind = "handover"
        elif i % 211 == 0:
            kind, sender = "system", "room"
        body = body_text(rng, mid)
        is_unread = i in unread
        status = rng.choice(("queued", "delivered")) if is_unread else "read"
        delivered_at = None if status == "queued" else at + 0.8
        read_at = None if is_unread else at + rng.uniform(5, 600)
        attempts = 0 if status == "queued" else 1
        messages.append(
            (
                mid,
                kind,
                sender,
                recipient,
                body,
                at,
                status,
                delivered_at,
                read_at,
                None,
                attempts,
                None,
            )
        )
        size = len(body)
        events.append(
            (
                at,
                "message.sent",
                sender,
                recipient,
                mid,
                json.dumps(
                    {"kind": kind, "to": recipient, "status": "queued", "size": size},
                    separators=(",", ":"),
                ),
            )
        )
        if kind == "handover":
            fields = {"what_changed": "the api", "what_to_do": "update the client"}
            handovers.append((mid, "approved", at, at + 60, None, "operator", json.dumps(fields)))
            events.append((at, "handover.requested", sender, recipient, mid, "{}"))
            events.append((at + 60, "handover.approved", "operator", recipient, mid, "{}"))
        if read_at is not None:
            events.append((read_at, "message.read", recipient, recipient, mid, "{}"))
    events.sort(key=lambda e: e[0])

    with write_transaction(room.store.conn) as conn:
        conn.executemany(
            "INSERT INTO messages (id, kind, sender, recipient, body, created_at, status,"
            " delivered_at, read_at, failure, attempts, link_id)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)",
            messages,
        )
        conn.executemany(
            "INSERT INTO handovers (message_id, state, requested_at, decided_at, reason,"
            " decided_by, fields) VALUES ($1,$2,$3,$4,$5,$6,$7)",
            handovers,
        )
        conn.executemany(
            "INSERT INTO events (at, kind, actor, subject, message_id, data) VALUES"
            " ($1,$2,$3,$4,$5,$6)",
            events,
        )
    room.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    room.close()
    db = home / "room.db"
    return {
        "messages": total,
        "events": len(events),
        "handovers": len(handovers),
        "unread": {name: sum(1 for v in unread.values() if v == name) for name in NAMES},
        "seed_s": round(time.perf_counter() - start, 2),
        "db_bytes": db.stat().st_size,
    }


def refill_drain(home: Path, batch: int) -> Callable[[], None]:
    """A setup step: send ``batch`` fresh messages to ``drain`` through ``Room.send``."""
    counter = iter(range(10**9))
    senders = [n for n in NAMES if n != DRAIN]

    def setup() -> None:
        room = open_room(home)
        try:
            for _ in range(batch):
                n = next(counter)
                room.send(senders[n % len(senders)], DRAIN, f"fresh message {n} for the drain")
        finally:
            room.close()

    return setup


def expect_messages(
    count: int, *, json_out: bool = False
) -> Callable[[subprocess.CompletedProcess[bytes]], None]:
    """A check that a command printed ``count`` messages (so the timing measured work)."""

    def check(result: subprocess.CompletedProcess[bytes]) -> None:
        out = result.stdout.decode()
        got = (
            len(json.loads(out))
            if json_out
            else sum(1 for line in out.splitlines() if line.startswith("from: "))
        )
        if got != count:
            raise CommandFailed(f"expected {count} messages, got {got}: {out[:200]!r}")

    return check


def expect_names(result: subprocess.CompletedProcess[bytes]) -> None:
    out = result.stdout.decode()
    missing = [n for n in NAMES if f"\n{n} " not in f"\n{out}"]
    if missing:
        raise CommandFailed(f"who does not list {missing}: {out[:200]!r}")


def big_room_commands(home: Path, sizes: Sizes, reader_unread: int) -> list[Command]:
    python = str(venv_python())
    cli = str(venv_script("agent-room"))
    env = bench_env(home)
    return [
        Command("python -c pass", [python, "-c", "pass"], env),
        Command("python -c 'import sqlite3'", [python, "-c", "import sqlite3"], env),
        Command(
            "import the CLI, no command",
            [python, "-c", "from agent_room.cli.app import root"],
            env,
        ),
        Command("history 20", [cli, "history", "20"], env, check=expect_messages(20)),
        Command(
            "history 20 --json",
            [cli, "history", "20", "--json"],
            env,
            check=expect_messages(20, json_out=True),
        ),
        Command(
            f"inbox --peek ({reader_unread} unread)",
            [cli, "inbox", "--peek"],
            bench_env(home, AGENT_ROOM_NAME=READER),
            check=expect_messages(reader_unread),
        ),
        Command(
            f"inbox (reads {sizes.drain_batch})",
            [cli, "inbox"],
            bench_env(home, AGENT_ROOM_NAME=DRAIN),
            setup=refill_drain(home, sizes.drain_batch),
            check=expect_messages(sizes.drain_batch),
        ),
        Command("who", [cli, "who"], env, check=expect_names),
    ]


def time_in_process(
    fn: Callable[[], object], runs: int, setup: Callable[[], None] | None = None
) -> Stats:
    timings = []
    for _ in range(runs):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        fn()
        timings.append(time.perf_counter() - t0)
    return Stats.of(timings)


def bench_in_process_reads(home: Path, sizes: Sizes) -> dict[str, Stats]:
    """What each command does to the database, inside one process.

    Each call opens the room, does the command's work and closes the room, as the
    command's process does; the rest of a process's time is start-up, imports and
    printing.
    """

    def once(work: Callable[[Room], object]) -> Callable[[], None]:
        def call() -> None:
            room = open_room(home)
            try:
                work(room)
            finally:
                room.close()

        return call

    runs = sizes.inproc_reads
    # The same read of the inbox while another connection keeps the database open (as
    # the console does): the closing process is then not the last one, and SQLite
    # neither checkpoints nor deletes the WAL file on its way out.
    keeper = open_room(home)
    try:
        held = {
            "  same, while another connection is open": time_in_process(
                once(lambda r: r.inbox(DRAIN)), runs, setup=refill_drain(home, sizes.drain_batch)
            )
        }
    finally:
        keeper.close()
    return {
        "open, close": time_in_process(once(lambda _room: None), runs),
        "open, history(20), close": time_in_process(once(lambda r: r.history(20)), runs),
        "open, inbox(reader, peek), close": time_in_process(
            once(lambda r: r.inbox(READER, peek=True)), runs
        ),
        f"open, inbox(drain) reading {sizes.drain_batch}, close": time_in_process(
            once(lambda r: r.inbox(DRAIN)), runs, setup=refill_drain(home, sizes.drain_batch)
        ),
        "open, who(), close": time_in_process(once(lambda r: r.who()), runs),
        **held,
    }


VM_STEP = 100
"""The progress handler fires every this many SQLite virtual-machine instructions."""


def query_profile(home: Path) -> list[dict[str, Any]]:
    """The SELECTs each read path runs, their plans, and the SQLite work they take.

    The SQL is taken from the store as it runs (a trace callback), so this never drifts
    from the package. ``vm_steps`` counts virtual-machine instructions (in steps of
    ``VM_STEP``): it grows with the rows a query visits, so a query that scans the
    messages shows up here long before it shows up in a timing.
    """
    room = open_room(home)
    statements: list[str] = []
    steps = [0]

    def trace(sql: str) -> None:
        if sql.lstrip().upper().startswith("SELECT"):
            statements.append(sql)

    def tick() -> int:
        steps[0] += VM_STEP
        return 0

    try:
        conn = room.store.conn
        assert isinstance(conn, sqlite3.Connection)  # counts SQLite's virtual machine steps
        paths: list[tuple[str, Callable[[], object]]] = [
            ("history 20", lambda: room.history(20)),
            ("inbox --peek", lambda: room.inbox(READER, peek=True)),
            ("who", room.who),
        ]
        profile = []
        for label, call in paths:
            statements.clear()
            steps[0] = 0
            conn.set_trace_callback(trace)
            conn.set_progress_handler(tick, VM_STEP)
            call()
            conn.set_progress_handler(None, 0)
            conn.set_trace_callback(None)
            plans = {
                sql: [str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()]
                for sql in statements
            }
            profile.append(
                {"path": label, "selects": len(statements), "vm_steps": steps[0], "plans": plans}
            )
        return profile
    finally:
        room.close()


def import_profile(runs: int) -> list[dict[str, Any]]:
    """The heaviest imports of the CLI (``-X importtime``), median self time over runs."""
    argv = [
        str(venv_python()),
        "-X",
        "importtime",
        "-c",
        "from agent_room.cli.app import root",
    ]
    self_us: dict[str, list[int]] = {}
    cumulative_us: dict[str, list[int]] = {}
    for _ in range(runs):
        result = subprocess.run(argv, capture_output=True, check=True, stdin=subprocess.DEVNULL)
        for line in result.stderr.decode().splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, total, name = line.removeprefix("import time:").split("|")
            module = name.strip()
            self_us.setdefault(module, []).append(int(own))
            cumulative_us.setdefault(module, []).append(int(total))
    heaviest = sorted(self_us, key=lambda module: median(self_us[module]), reverse=True)
    return [
        {
            "module": module,
            "self_ms": round(median(self_us[module]) / 1e3, 2),
            "cumulative_ms": round(median(cumulative_us[module]) / 1e3, 2),
        }
        for module in heaviest
    ]


# -- report --------------------------------------------------------------------------


def budget_checks(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    checks = []
    for label, row in results.items():
        if label.startswith(("history 20", "inbox")) and "--json" not in label:
            median_ms = float(row["median_ms"])
            checks.append(
                {
                    "command": label,
                    "median_ms": median_ms,
                    "budget_ms": BUDGET_MS,
                    "pass": median_ms < BUDGET_MS,
                }
            )
    return checks


def public(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without its private ``_`` keys, for the JSON result."""
    return {k: v for k, v in data.items() if not k.startswith("_")}


def report(
    sizes: Sizes,
    inproc: dict[str, Any],
    seq: dict[str, Any],
    par: dict[str, Any],
    seed: dict[str, Any],
    commands: list[Command],
    reads: dict[str, Stats],
    profile: list[dict[str, Any]],
    imports: list[dict[str, Any]],
    quick: bool,
) -> tuple[dict[str, Any], bool]:
    per_msg = inproc["per_message"]
    print_table(
        ["path", "messages", "msgs/s", "median", "p95"],
        [
            [
                "Room.send (one process)",
                str(inproc["messages"]),
                f"{inproc['msgs_per_s']:.0f}",
                f"{per_msg['median_ms'] * 1e3:.0f} us",
                f"{per_msg['p95_ms'] * 1e3:.0f} us",
            ]
        ],
        title="1. In-process sends",
    )

    stats = {c.label: Stats.of(c.timings) for c in commands}
    base = stats["python -c pass"].median

    send_rows = []
    for label, data in (
        ("agent-room send, sequential", seq),
        (f"agent-room send, {par['streams']} parallel streams", par),
    ):
        s = data["_stats"]
        send_rows.append(
            [
                label,
                str(data["processes"]),
                f"{data['msgs_per_s']:.1f}",
                ms(s.median) if s else "-",
                ms(s.p95) if s else "-",
                f"{s.median / base:.1f}x" if s else "-",
            ]
        )
    print_table(
        ["path", "processes", "msgs/s", "median ms", "p95 ms", "x python"],
        send_rows,
        title="2. Whole-process sends (ms per process)",
    )
    if par["failures"]:
        print(f"   {par['failures']} parallel sends FAILED, e.g. {par['failure_samples'][0]}")
    if par["stored"] != par["processes"]:
        print(f"   parallel sends: {par['stored']} stored, {par['processes']} sent")

    command_results: dict[str, dict[str, Any]] = {}
    for label, s in stats.items():
        command_results[label] = {**s.as_ms(), "ratio_to_python": round(s.median / base, 2)}
    checks = budget_checks(command_results)
    verdict = {c["command"]: ("PASS" if c["pass"] else "FAIL") for c in checks}
    print_table(
        ["command", "median ms", "p95 ms", "min ms", "x python", f"budget <{BUDGET_MS:.0f}"],
        [
            [
                label,
                ms(s.median),
                ms(s.p95),
                ms(s.minimum),
                f"{s.median / base:.2f}x",
                verdict.get(label, ""),
            ]
            for label, s in stats.items()
        ],
        title=(
            f"3+4. Room of {seed['messages']:,} messages: whole process, {sizes.runs} runs"
            " each, round-robin"
        ),
    )
    print_table(
        ["database work of the command", "median ms", "p95 ms"],
        [[label, f"{s.median * 1e3:.3f}", f"{s.p95 * 1e3:.3f}"] for label, s in reads.items()],
        title=f"The same database work in-process, {sizes.inproc_reads} calls each",
    )
    print_table(
        ["read path", "SELECTs", "~VM steps"],
        [[p["path"], str(p["selects"]), str(p["vm_steps"])] for p in profile],
        title="SQLite work per read path (the VM steps should not grow with the room)",
    )
    for p in profile:
        for plan in p["plans"].values():
            print(f"  {p['path']}: {' / '.join(plan)}")
    print_table(
        ["module", "self ms", "cumulative ms"],
        [[r["module"], f"{r['self_ms']:.1f}", f"{r['cumulative_ms']:.1f}"] for r in imports[:12]],
        title="Heaviest imports of the CLI (python -X importtime, median self time)",
    )

    intact = not par["failures"] and par["stored"] == par["processes"]
    ok = intact and all(c["pass"] for c in checks)
    print(
        f"\nBudget (median per process < {BUDGET_MS:.0f} ms for history 20 and inbox;"
        " every parallel send succeeded and was stored): "
        + ("PASS" if ok else "FAIL")
        + (" (quick run: smaller room, fewer runs)" if quick else "")
    )
    data = {
        "quick": quick,
        "sizes": asdict(sizes),
        "in_process_send": inproc,
        "process_send": public(seq),
        "parallel_send": public(par),
        "big_room": {
            **seed,
            "runs": sizes.runs,
            "commands": command_results,
            "in_process_reads": {label: s.as_ms() for label, s in reads.items()},
            "read_paths": profile,
            "imports": imports,
        },
        "budget": {"limit_ms": BUDGET_MS, "checks": checks, "sends_intact": intact, "pass": ok},
    }
    return data, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--runs", type=int, help="runs per command on the big room")
    parser.add_argument("--messages", type=int, help="messages in the big room")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    sizes = Sizes.quick() if args.quick else Sizes.full()
    sizes = with_given(sizes, runs=args.runs, room_messages=args.messages)

    step = progress(args.quiet)

    print(
        f"agent-room bus benchmark{' (quick)' if args.quick else ''}: sqlite "
        f"{sqlite3.sqlite_version}, {venv_python()}"
    )

    with tempfile.TemporaryDirectory(prefix="agent-room-bench-") as tmp:
        scratch = Path(tmp)
        step(f"in-process: {sizes.inproc_messages} x Room.send")
        inproc = bench_in_process(scratch / "in-process", sizes)
        step(f"whole-process: {sizes.seq_processes} x agent-room send")
        seq = bench_process_send(scratch / "sequential", sizes)
        step(f"whole-process: {sizes.streams} x {sizes.per_stream} parallel sends")
        par = bench_parallel_send(scratch / "parallel", sizes)
        big = scratch / "big"
        step(f"seeding a room of {sizes.room_messages:,} messages")
        seed = seed_big_room(big, sizes)
        step(f"seeded in {seed['seed_s']} s ({seed['db_bytes'] / 1e6:.1f} MB)")
        commands = big_room_commands(big, sizes, seed["unread"][READER])
        step(f"timing {len(commands)} commands x {sizes.runs} runs, round-robin")
        time_round_robin(commands, sizes.runs)
        step("in-process reads, query plans, import times")
        reads = bench_in_process_reads(big, sizes)
        profile = query_profile(big)
        imports = import_profile(5 if args.quick else 15)

    data, ok = report(sizes, inproc, seq, par, seed, commands, reads, profile, imports, args.quick)
    path = write_result("bus", data)
    print(f"Results: {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
