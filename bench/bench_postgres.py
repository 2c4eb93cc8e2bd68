"""Benchmark of the room on PostgreSQL beside the same room on SQLite.

Run it from the project root::

    .venv/bin/python bench/bench_postgres.py            # the full run (a few minutes)
    .venv/bin/python bench/bench_postgres.py --quick    # a smoke run with small counts
    .venv/bin/python bench/bench_postgres.py --only hooks --runs 60   # one part alone

PostgreSQL is a throw-away cluster of Debian's server (``tests/pgcluster.py``) in a
temporary directory, on this machine: the network is the loopback. The parts:

1. **send → nudge**: one deliverer (the real ``Deliverer`` with its room watch: file
   events and the FIFO on SQLite, LISTEN/NOTIFY on PostgreSQL) and a multiplexer that
   only notes when it is asked to type; each message is sent on another connection, the
   nudge receipted at once (as the agent's hook would), the next sent once it is.
   Timed from the send's call to the typing.
2. **Whole processes**: ``agent-room send`` and the ``UserPromptSubmit`` hook as fresh
   processes of the console script (as the plugin runs the hook), beside ``python -c
   pass`` (budget: the hook on PostgreSQL within 4x the bare interpreter); with
   ``--baseline REV``, that revision's in the same rounds.
3. **A simulated fleet**: up to 10 hosts of 50 sessions (500 sessions), a history of
   100,000 messages, one deliverer per host (each its own host id and lease); a burst of
   messages to sessions spread over the active hosts, timed until every one is typed:
   deliveries per second and the send → nudge latency as hosts (and sessions) grow.
4. **The console's read**: what the console's reader does on every wake-up
   (``SnapshotReader.read``: the roster, inboxes, handovers, links ...) on a room of 50
   sessions and 5,000 messages, timed on the same connection again and again.

The deliverers and the console's reader open the room as the long-lived processes do
(``Room.open(long_lived=True)``: psycopg); the sends and the receipts stand for
``agent-room send`` and the agent's hook (the libpq binding). ``--clients`` runs the
PostgreSQL parts once per client of the long-lived side: ``psycopg`` (what they use),
``libpq`` (what they used before), ``psycopg-unprepared`` (psycopg without preparing
the statements it repeats).

Results go to ``bench/results/postgres.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    Stats,
    bench_env,
    print_table,
    run_once,
    venv_python,
    venv_script,
    write_result,
)

from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.store import psycopg_conn
from agent_room.workers.deliverer import Deliverer

sys.path.insert(0, str(ROOT))  # the throw-away cluster of the tests
from tests.fakes import IdleMux
from tests.pgcluster import Cluster, server_bin

HOOK_BUDGET = 4.0
"""The hook on PostgreSQL, as a multiple of the bare interpreter's start."""
PARTS = ("nudge", "hooks", "fleet", "reads")
"""The parts ``--only`` picks: send → nudge, the whole processes, the fleet, the
console's read."""
CLIENTS = ("psycopg", "libpq", "psycopg-unprepared")
"""The long-lived side's client on PostgreSQL (``--clients``)."""
LONG_LIVED = {"long_lived": True}
"""How the deliverers and the console's reader open the room (``_open``)."""


def use_client(client: str) -> None:
    """Open the long-lived side's rooms through ``client`` from now on."""
    LONG_LIVED["long_lived"] = client != "libpq"
    unprepared = client == "psycopg-unprepared"
    psycopg_conn.PREPARE_THRESHOLD = None if unprepared else 5


class Alive:
    def is_alive(self, _pid: int, _start: int | None) -> bool:
        return True

    def start_ticks(self, _pid: int) -> int | None:
        return 1


@contextmanager
def engine_home(kind: str, cluster: Cluster | None, label: str) -> Iterator[Path]:
    """A throw-away room on ``kind`` (``sqlite`` or ``postgresql``)."""
    with tempfile.TemporaryDirectory(prefix=f"ar-bench-{label}-") as tmp:
        home = Path(tmp) / "room"
        if kind == "postgresql":
            assert cluster is not None
            home.mkdir(mode=0o700)
            conf = home / "room.conf"
            conf.touch(mode=0o600)
            conf.write_text(f"database = {cluster.new_room(f'{label}_{os.getpid()}')}\n")
        yield home


def _open(home: Path, host: str = "bench", *, long_lived: bool = False) -> Room:
    """The room as a short command opens it, or (``long_lived``) as the long-lived
    processes of this run do (``use_client``)."""
    os.environ["AGENT_ROOM_HOST"] = host
    wanted = long_lived and LONG_LIVED["long_lived"]
    return Room.open({"AGENT_ROOM_HOME": str(home)}, long_lived=wanted)


def _register(room: Room, name: str, pane: str) -> None:
    room.store.register(
        {"session_id": f"s-{name}", "state": "idle", "pane": pane, "pid": os.getpid()},
        wanted=name,
        explicit=True,
        at=time.time(),
        alive=lambda *_: True,
    )


class Fleet:
    """Deliverers, one per host, each with a multiplexer that receipts what it types."""

    def __init__(self, home: Path, hosts: Sequence[str]) -> None:
        self.typed: dict[int, float] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.rooms: list[Room] = []
        for host in hosts:
            room = _open(home, host, long_lived=True)  # the deliverer's, as in watch
            receipts = _open(home, host)  # the agent's hook's
            self.rooms += [room, receipts]
            mux = IdleMux(self._typed_by(receipts))
            worker = Deliverer(room, mux, Alive(), receipt_timeout=5.0)  # type: ignore[arg-type]
            self.threads.append(threading.Thread(target=worker.run, args=(self.stop,)))

    def _typed_by(self, receipts: Room) -> Callable[[str, str], None]:
        def typed(pane: str, text: str) -> None:
            now = time.perf_counter()
            ids = [int(word[2:].rstrip(")")) for word in text.split() if word.startswith("(#")]
            ids += [int(w[1:].rstrip(")")) for w in text.split() if w.startswith("#")]
            name = pane.removeprefix("%p-")
            receipts.store.mark_delivered(name, ids, at=time.time(), via="nudge")
            with self.lock:
                for message_id in ids:
                    self.typed.setdefault(message_id, now)

        return typed

    def __enter__(self) -> Fleet:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)
        for room in self.rooms:
            room.close()

    def wait(self, ids: Sequence[int], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if all(i in self.typed for i in ids):
                    return
            time.sleep(0.001)
        raise RuntimeError(f"{sum(i not in self.typed for i in ids)} messages never typed")


def bench_send_to_nudge(homes: dict[str, Path], count: int) -> dict[str, Stats]:
    """One recipient, one deliverer: send → typed, one message at a time. One room per
    client of the deliverer (``homes``), each with its deliverer running; the sends go
    to each room in turn, so that a machine busy with something else slows each alike."""
    senders: dict[str, Room] = {}
    fleets: dict[str, Fleet] = {}
    with ExitStack() as stack:
        for client, home in homes.items():
            room = senders[client] = _open(home)
            stack.callback(room.close)
            room.join("backend")
            _register(room, "frontend", "%p-frontend")
            use_client(client)
            fleets[client] = stack.enter_context(Fleet(home, ["bench"]))
        time.sleep(1.0)  # the deliverers hold their leases and listen
        latencies: dict[str, list[float]] = {client: [] for client in homes}
        for n in range(count):
            for client, room in senders.items():
                start = time.perf_counter()
                message_id = room.send("backend", "frontend", f"message {n}")
                fleets[client].wait([message_id], timeout=10)
                latencies[client].append(fleets[client].typed[message_id] - start)
                time.sleep(0.02)
    return {client: Stats.of(values) for client, values in latencies.items()}


def compiled(source: Path) -> None:
    """Compile ``source``'s package, as an install does: a stale ``.pyc`` (and with
    ``PYTHONDONTWRITEBYTECODE`` set it stays stale) would be compiled again by every
    timed process."""
    subprocess.run(
        [str(venv_python()), "-m", "compileall", "-q", str(source / "agent_room")],
        check=True,
        capture_output=True,
    )


@contextmanager
def baseline_tree(rev: str | None) -> Iterator[Path | None]:
    """The package as it was at ``rev`` (``git archive``), compiled, in a temporary
    directory; ``rev`` a folder holding an ``agent_room`` package: that one; ``None``
    without a ``rev``."""
    if rev is None:
        yield None
        return
    if (Path(rev) / "agent_room").is_dir():
        compiled(Path(rev))
        yield Path(rev)
        return
    with tempfile.TemporaryDirectory(prefix="ar-bench-baseline-") as tmp:
        archive = subprocess.run(
            ["git", "archive", rev, "agent_room"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        compiled(Path(tmp))
        yield Path(tmp)


def bench_processes(home: Path, runs: int, baseline: Path | None) -> dict[str, Stats]:
    """``agent-room send`` and a hook as fresh processes, and the bare interpreter, in
    interleaved rounds; with ``baseline``, that tree's send and hook in the same rounds."""
    python = str(venv_python())
    room = _open(home)
    room.join("frontend")
    room.close()
    fixture = ROOT / "tests" / "fixtures" / "claude-code-2.1.330"
    start = json.loads((fixture / "hook-SessionStart-startup.json").read_text())
    payload = (fixture / "hook-UserPromptSubmit.json").read_bytes()
    env = bench_env(home, CLAUDE_PID=str(os.getpid()), AGENT_ROOM_NAME="backend")
    for key in ("AGENT_ROOM_HOST", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE"):
        env.pop(key, None)
    compiled(ROOT)
    trees = {"": env}
    if baseline is not None:
        trees[" (baseline)"] = {**env, "PYTHONPATH": str(baseline)}
    script = str(venv_script("agent-room"))  # as the plugin runs it (no runpy: 2-3 ms)
    hook = [script, "hook"]
    run_once([*hook, "SessionStart"], env, stdin=json.dumps(start).encode())
    timings: dict[str, list[float]] = {"python -c pass": []}
    for n in range(runs):
        timings["python -c pass"].append(run_once([python, "-c", "pass"], env)[0])
        for label, tree in trees.items():
            send = [script, "send", "@frontend", f"process {n}"]
            timings.setdefault(f"send{label}", []).append(run_once(send, tree)[0])
            hooked = run_once([*hook, "UserPromptSubmit"], tree, stdin=payload)[0]
            timings.setdefault(f"hook{label}", []).append(hooked)
    errors = home / "errors.log"
    if errors.exists():  # a hook that failed (and exited 0) would time nothing
        raise RuntimeError(f"a hook failed: {errors.read_text().strip()}")
    return {label: Stats.of(values) for label, values in timings.items()}


def bench_reads(home: Path, count: int, clients: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The console's reader: one snapshot of a room of 50 sessions, ``count`` times on
    each client's connection, in turn (after a few reads that warm them): the time it
    takes, and the CPU time of the reading thread (what a busy machine varies least)."""
    seed_history(home, 5_000)
    room = _open(home)
    for n in range(50):
        _register(room, f"agent{n}", f"%p-{n}")
    for n in range(200):
        room.send(f"agent{n % 50}", f"agent{(n + 1) % 50}", f"unread {n}")
    room.close()
    readers: dict[str, SnapshotReader] = {}
    with ExitStack() as stack:
        for client in clients:
            use_client(client)
            opened = _open(home, long_lived=True)
            stack.callback(opened.close)
            readers[client] = SnapshotReader(opened)
            for _ in range(10):
                readers[client].read()
        wall: dict[str, list[float]] = {client: [] for client in clients}
        cpu: dict[str, list[float]] = {client: [] for client in clients}
        for _ in range(count):
            for client, reader in readers.items():
                start, started = time.perf_counter(), time.thread_time()
                reader.read()
                cpu[client].append(time.thread_time() - started)
                wall[client].append(time.perf_counter() - start)
    return {
        client: {"wall": Stats.of(wall[client]).as_ms(), "cpu": Stats.of(cpu[client]).as_ms()}
        for client in clients
    }


def seed_history(home: Path, messages: int) -> None:
    """``messages`` already read messages between ten names, with their audit events."""
    room = _open(home)
    conn = room.store.conn
    rows = [
        (
            "chat",
            f"n{i % 10}",
            f"n{(i + 1) % 10}",
            f"history {i}",
            1000.0 + i,
            "read",
            1000.0 + i,
            1000.0 + i,
        )
        for i in range(messages)
    ]
    conn.begin_write()
    conn.executemany(
        "INSERT INTO messages (kind, sender, recipient, body, created_at, status,"
        " delivered_at, read_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
        rows,
    )
    conn.execute("COMMIT")
    room.close()


def bench_fleet(home: Path, hosts: int, per_host: int, burst: int) -> dict[str, Any]:
    """``hosts`` deliverers over ``hosts * per_host`` sessions; a burst, timed."""
    names = [f"h{h}-a{a}" for h in range(hosts) for a in range(per_host)]
    for h in range(hosts):
        room = _open(home, f"host{h}")
        for a in range(per_host):
            _register(room, f"h{h}-a{a}", f"%p-h{h}-a{a}")
        room.close()
    sender = _open(home, "sender")
    sender.join("boss")
    latencies = []
    with Fleet(home, [f"host{h}" for h in range(hosts)]) as fleet:
        time.sleep(1.5)
        sent: dict[int, float] = {}
        began = time.perf_counter()
        for n in range(burst):
            at = time.perf_counter()
            sent[sender.send("boss", names[(n * 7) % len(names)], f"burst {n}")] = at
        fleet.wait(list(sent), timeout=120)
        took = max(fleet.typed[i] for i in sent) - began
        latencies = [fleet.typed[i] - at for i, at in sent.items()]
    sender.close()
    stats = Stats.of(latencies)
    return {
        "hosts": hosts,
        "sessions": len(names),
        "burst": burst,
        "deliveries_per_second": round(burst / took, 1),
        "latency": stats.as_ms(),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts (a smoke run)")
    parser.add_argument(
        "--only", choices=PARTS, action="append", help="run this part (repeatable); all if none"
    )
    parser.add_argument("--runs", type=int, default=0, help="runs of each whole process")
    parser.add_argument(
        "--clients",
        default="psycopg",
        help=f"the long-lived side's clients on PostgreSQL, comma-separated ({', '.join(CLIENTS)})",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="time this git revision's send and hook beside (or a folder's agent_room)",
    )
    args = parser.parse_args(argv)
    clients = args.clients.split(",")
    if not set(clients) <= set(CLIENTS):
        parser.error(f"--clients: one or more of {', '.join(CLIENTS)}")
    parts = set(args.only or PARTS)
    reads = 50 if args.quick else 300
    sends, runs = (20, 5) if args.quick else (200, 30)
    runs = args.runs or runs
    history, burst = (5_000, 100) if args.quick else (100_000, 500)
    fleet_hosts = (1, 2) if args.quick else (1, 2, 5, 10)
    bindir = server_bin()
    if bindir is None:
        print("PostgreSQL's server is not installed (Debian's postgresql)", file=sys.stderr)
        return 2
    cluster = Cluster(bindir)
    os.environ.update(cluster.env())
    results: dict[str, Any] = {"send_to_nudge": {}, "processes": {}, "fleet": [], "reads": {}}
    results["baseline"] = args.baseline
    results["clients"] = clients
    try:
        for kind in ("sqlite", "postgresql"):
            if "hooks" in parts:
                with (
                    engine_home(kind, cluster, "proc") as home,
                    baseline_tree(args.baseline) as baseline,
                ):
                    stats = bench_processes(home, runs, baseline)
                    results["processes"][kind] = {k: v.as_ms() for k, v in stats.items()}
            these = clients if kind == "postgresql" else ["sqlite"]
            if "nudge" in parts:
                with ExitStack() as homes:
                    made = {
                        client: homes.enter_context(
                            engine_home(kind, cluster, f"nudge_{client}".replace("-", "_"))
                        )
                        for client in these
                    }
                    for client, nudged in bench_send_to_nudge(made, sends).items():
                        results["send_to_nudge"][_label(kind, client, clients)] = nudged.as_ms()
            if "reads" in parts:
                with engine_home(kind, cluster, "reads") as home:
                    for client, timed in bench_reads(home, reads, these).items():
                        results["reads"][_label(kind, client, clients)] = timed
        for client in clients if "fleet" in parts else ():
            use_client(client)
            for hosts in fleet_hosts:
                with engine_home(
                    "postgresql", cluster, f"fleet{hosts}_{client}".replace("-", "_")
                ) as home:
                    seed_history(home, history)
                    result = bench_fleet(home, hosts, 50, burst)
                    results["fleet"].append({"client": client, **result})
    finally:
        cluster.destroy()
    report(results, history)
    ok = True
    if "hooks" in parts:
        pg = results["processes"]["postgresql"]
        ratio = pg["hook"]["median_ms"] / pg["python -c pass"]["median_ms"]
        results["hook_ratio"] = round(ratio, 2)
        results["hook_budget_ok"] = ok = ratio <= HOOK_BUDGET
        print(f"hook on PostgreSQL: {ratio:.2f}x the bare interpreter (budget {HOOK_BUDGET}x)")
        if "hook (baseline)" in pg:
            before = pg["hook (baseline)"]["median_ms"] / pg["python -c pass"]["median_ms"]
            results["hook_ratio_baseline"] = round(before, 2)
            print(f"  the baseline's ({args.baseline}): {before:.2f}x")
        print(f"load average: {os.getloadavg()[0]:.2f}")
    name = "postgres" if parts == set(PARTS) else "postgres-" + "-".join(sorted(parts))
    print(f"results: {write_result(name, results)}")
    return 0 if ok else 1


def _label(kind: str, client: str, clients: Sequence[str]) -> str:
    """A result's name: the engine, and on PostgreSQL the client when several ran."""
    return kind if kind == "sqlite" or len(clients) == 1 else f"{kind} ({client})"


def report(results: dict[str, Any], history: int) -> None:
    """The tables of the parts that ran."""
    if reads := results["reads"]:
        print_table(
            ["engine", "median ms", "p95 ms", "CPU median ms", "CPU p95 ms"],
            [
                [k, *(str(v[t][s]) for t in ("wall", "cpu") for s in ("median_ms", "p95_ms"))]
                for k, v in reads.items()
            ],
            title="the console's read (50 sessions, 5,000 messages; one connection)",
        )
    if nudge := results["send_to_nudge"]:
        print_table(
            ["engine", "median ms", "p95 ms"],
            [[k, str(v["median_ms"]), str(v["p95_ms"])] for k, v in nudge.items()],
            title="send → nudge typed (one deliverer, receipted at once)",
        )
    rows = []
    for kind, stats in results["processes"].items():
        for label, value in stats.items():
            rows.append([kind, label, str(value["median_ms"]), str(value["p95_ms"])])
    if rows:
        print_table(["engine", "process", "median ms", "p95 ms"], rows, title="whole processes")
    if results["fleet"]:
        print_table(
            ["client", "hosts", "sessions", "burst", "deliveries/s", "median ms", "p95 ms"],
            [
                [
                    str(f["client"]),
                    str(f["hosts"]),
                    str(f["sessions"]),
                    str(f["burst"]),
                    str(f["deliveries_per_second"]),
                    str(f["latency"]["median_ms"]),
                    str(f["latency"]["p95_ms"]),
                ]
                for f in results["fleet"]
            ],
            title=f"a fleet on PostgreSQL ({history:,} messages of history)",
        )


if __name__ == "__main__":
    sys.exit(main())
