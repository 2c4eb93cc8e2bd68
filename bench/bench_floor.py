"""Speed near the floor: the short processes and the idle watcher, install by install.

Run it from the project root::

    .venv/bin/python bench/bench_floor.py                       # this tree, editable
    .venv/bin/python bench/bench_floor.py --wheel --baseline REV  # and a wheel; and REV

Each figure is measured side by side with the floor it is compared to, for every
install given, in the same rounds (one run of each install per round, the order turning
round by round), so that a loaded machine slows them alike:

- **installs**: ``dev`` is the project's venv as it is (an editable install); ``--wheel``
  adds the install a user has: a wheel built from the tree, installed into a fresh
  virtual environment (its dependencies from the project's venv); ``--baseline REV``
  adds the same for a git revision (a temporary worktree; its dev install is the
  project's venv with the worktree first on the path).
- **send -> line submitted**: the stand-in agent (``tests/standin_agent.py``, firing the
  install's own hooks) idle in a pane of a private tmux server, one ``agent-room watch``
  of the install delivering; a fresh ``agent-room send`` timed from its spawn until the
  pane echoes the nudge's Enter (the line submitted; seen through a control-mode client
  as tmux reads it). The floor: ``python -c pass`` of the same
  interpreter, plus one commit and one tmux command through a kept client. Beside it,
  the send process alone (spawn to exit): the deliverer, woken by the commit, types
  while the process ends, so the two differ by the deliverer's last step.
- **hooks**: SessionStart, UserPromptSubmit, Stop and SessionEnd with recorded payloads
  (a watcher holds the room open, as in a room with a deliverer), run as the clients run
  them: ``sh plugin/bin/agent-room-hook EVENT`` (the install's own launcher, with
  ``AGENT_ROOM_BIN`` naming its ``agent-room``), against ``python -c pass`` with a
  payload on stdin: the ratio of the medians. ``agent-room hook EVENT`` run directly is
  shown beside it (the console script as the installer wrote it: pip before 25 writes
  one that loads ``re`` first, which the launcher skips).
- **who and history**: ``agent-room who`` on rooms of 50, 500 and 2,000 sessions, and
  ``agent-room history 20`` on rooms of 10,000 and 1,000,000 messages (each seeded by
  the install's own code), against ``python -c pass``.
- **at rest**: ``agent-room watch`` and the console, each on a room of 50 idle agents
  (live processes), their CPU time over one quiet window beside a bare Textual app's;
  then the console's time from a hook's start until its row shows the new state
  (``_rest.py``).

Budgets (for the installs of this tree): send median <= 20 ms and p95 <= 35 ms; every
hook <= 2x ``python -c pass``; ``who`` at 2,000 sessions and ``history`` at 1,000,000
messages within 1.25x of the smallest room; the watcher and the console at rest <= 0.5 %
of a core each, and a hook's change on the console's screen <= 250 ms (median).
Results go to ``bench/results/floor.json``; the exit code is 1 when a budget fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    STANDIN,
    Stats,
    bench_env,
    git_state,
    print_table,
    progress,
    stop_process,
    wait_until,
    write_result,
)
from _installs import Install, baseline_worktree, installs_of, remove_worktree, rounds
from _tmux_observer import SESSION, Control, TmuxServer, perf

SEND_MEDIAN_MS = 20.0
SEND_P95_MS = 35.0
HOOK_RATIO = 2.0
FLAT_RATIO = 1.25
REST_PCT = 0.5
HOOK_TO_SCREEN_MS = 250.0
AGENTS = 50
HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
DIRECT = "agent-room hook "
"""The figures of the console script run directly (no budget: the launcher is the path)."""
PROMPTED = re.compile(rb"\[agent-room\] 1 new message from @backend \(#(\d+)\)\r\n")
"""The nudge, then the terminal's echo of its Enter: the line submitted to the agent."""


def timed(argv: Sequence[str], env: dict[str, str], stdin: bytes | None = None) -> float:
    start = perf()
    proc = subprocess.run(list(argv), env=env, input=stdin, capture_output=True, check=False)
    elapsed = perf() - start
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))}: {proc.stderr.decode().strip()}")
    return elapsed


# -- send -> the line submitted ------------------------------------------------------


@dataclass
class Lane:
    """One install's room, recipient pane and watcher."""

    install: Install
    home: Path
    pane: str
    watch: subprocess.Popen[bytes] | None = None
    times: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)
    """Each send's process alone, spawn to exit (the rest is the deliverer's)."""
    bare: list[float] = field(default_factory=list)

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.home / 'room.db'}?mode=ro", uri=True, timeout=30)

    def row(self, sql: str, *args: Any) -> Any:
        conn = self.db()
        try:
            return conn.execute(sql, args).fetchone()
        finally:
            conn.close()


def start_lane(server: TmuxServer, install: Install, tmp: Path, first: bool) -> Lane:
    home = tmp / f"send-{install.slug}" / "room"
    env = install.env(home, AGENT_ROOM_NAME="frontend")
    subprocess.run([str(install.script), "join", "backend"], env=install.env(home), check=True,
                   capture_output=True)  # fmt: skip
    keep = ("AGENT_ROOM_", "PYTHONPATH", "PATH", "HOME")
    assign = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k.startswith(keep))
    # from the room's folder: the stand-in's hooks run ``python -m agent_room``, which
    # would import the tree in the current directory before the install's own
    command = f"cd {shlex.quote(str(home.parent))} && exec env {assign} {install.python} {STANDIN}"
    pane = server.start(command) if first else server.new_window(install.slug, command)
    lane = Lane(install, home, pane)
    try:
        wait_until(
            lambda: lane.row("SELECT state FROM sessions WHERE name = 'frontend'") == ("idle",),
            timeout=30,
            step=0.05,
            what=f"{install.label}: the stand-in registered",
        )
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}:\n{server.run('capture-pane', '-p', '-t', pane)}") from None
    log = home.parent / "watch.log"
    with log.open("wb") as out:
        lane.watch = subprocess.Popen(
            [str(install.script), "watch"], env=install.env(home), stdin=subprocess.DEVNULL,
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until(
            lambda: (
                lane.row("SELECT pid FROM leases WHERE name = 'deliverer'")
                == (lane.watch.pid if lane.watch else None,)
            ),
            timeout=30,
            step=0.05,
            what=f"{install.label}: the watcher's lease",
        )
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}:\n{log.read_text()}") from None
    return lane


def one_send(ctl: Control, lane: Lane, n: int) -> tuple[float, float]:
    """Spawn ``send`` until its nudge is a submitted prompt in the stand-in; settle. The
    time to the line submitted, and the send process's own (spawn to exit)."""
    stream = ctl.clear(lane.pane)
    env = lane.install.env(lane.home, AGENT_ROOM_NAME="backend")
    spawned = ctl.spawn([str(lane.install.script), "send", "@frontend", f"floor {n}"], env)
    match = ctl.wait(
        lambda: PROMPTED.search(stream.data, stream.mark), timeout=20, what="the prompt"
    )
    elapsed = stream.last_at - spawned.started
    own = ctl.wait_exit(spawned)
    mid = int(match[1])

    def settled() -> bool:
        status = lane.row("SELECT status FROM messages WHERE id = $1", mid)
        state = lane.row("SELECT state FROM sessions WHERE name = 'frontend'")
        return bool(status == ("delivered",) and state == ("idle",))

    ctl.wait(settled, timeout=20, what=f"#{mid} receipted", step=0.02)
    ctl.wait_quiet(lane.pane)
    return elapsed, own


def commit_cost(runs: int = 200) -> float:
    """One send's commit in process (the part of the floor that is the room's own)."""
    from agent_room.room.service import Room

    with tempfile.TemporaryDirectory() as tmp:
        room = Room.open({"AGENT_ROOM_HOME": str(Path(tmp) / "room")})
        try:
            room.join("a")
            room.join("b")
            times = []
            for i in range(runs):
                start = perf()
                room.send("a", "b", f"floor {i}")
                times.append(perf() - start)
        finally:
            room.close()
    return Stats.of(times).median


def measure_send(
    installs: Sequence[Install], runs: int, tmp: Path, step: Callable[[str], None]
) -> dict[str, Any]:
    server = TmuxServer(bench_env(tmp))
    lanes: list[Lane] = []
    with ExitStack() as stack:
        stack.callback(server.kill)
        for i, install in enumerate(installs):
            lanes.append(start_lane(server, install, tmp, first=i == 0))
            watch = lanes[-1].watch
            assert watch is not None
            stack.callback(stop_process, watch)
        ctl = Control(server, SESSION)
        stack.callback(ctl.close)
        by_label = {lane.install.label: lane for lane in lanes}
        step(f"send -> submitted: {runs} rounds of {len(lanes)} installs (1 warm-up)")
        for r, order in enumerate(rounds(installs, runs + 1)):
            for install in order:
                lane = by_label[install.label]
                elapsed, own = one_send(ctl, lane, r)
                bare = timed([str(install.python), "-c", "pass"], install.env(lane.home))
                if r:
                    lane.times.append(elapsed)
                    lane.own.append(own)
                    lane.bare.append(bare)
    commit = commit_cost()
    control = 0.05e-3  # a kept control-mode client's command (bench_delivery measures it)
    return {
        lane.install.label: {
            "send": Stats.of(lane.times).as_ms(),
            "process": Stats.of(lane.own).as_ms(),
            "python": Stats.of(lane.bare).as_ms(),
            "floor_ms": round((Stats.of(lane.bare).median + commit + control) * 1e3, 2),
        }
        for lane in lanes
    }


# -- hooks -----------------------------------------------------------------------------


def measure_hooks(
    installs: Sequence[Install], runs: int, tmp: Path, step: Callable[[str], None]
) -> dict[str, Any]:
    from bench_hook import FIXTURES, agent_process, load_payloads

    _session, payloads = load_payloads(FIXTURES)
    found: dict[str, dict[str, list[float]]] = {i.label: {} for i in installs}
    with agent_process() as agent_pid:
        homes = {}
        keepers = []
        for install in installs:
            home = tmp / f"hooks-{install.slug}" / "room"
            env = install.env(home, AGENT_ROOM_NAME="backend", TMUX_PANE="%1",
                              CLAUDE_PID=str(agent_pid),
                              AGENT_ROOM_BIN=str(install.script))  # fmt: skip
            timed([str(install.script), "hook", "SessionStart"], env, payloads["SessionStart"])
            keeper = sqlite3.connect(home / "room.db")
            keeper.execute("SELECT count(*) FROM sessions").fetchone()
            keepers.append(keeper)
            homes[install.label] = (home, env)
        step(f"hooks: {runs} rounds of {len(installs)} installs x {2 * len(HOOK_EVENTS) + 1}")
        try:
            for r, order in enumerate(rounds(installs, runs + 1)):
                for install in order:
                    _home, env = homes[install.label]
                    argvs = [("python -c pass", [str(install.python), "-c", "pass"], b"{}")]
                    argvs += [(e, _launched(install, e), payloads[e]) for e in HOOK_EVENTS]
                    argvs += [
                        (f"{DIRECT}{e}", [str(install.script), "hook", e], payloads[e])
                        for e in HOOK_EVENTS
                    ]
                    for what, argv, stdin in argvs:
                        elapsed = timed(argv, env, stdin)
                        if r:
                            found[install.label].setdefault(what, []).append(elapsed)
        finally:
            for keeper in keepers:
                keeper.close()
    result: dict[str, Any] = {}
    for label, runs_of in found.items():
        bare = Stats.of(runs_of.pop("python -c pass")).median
        result[label] = {
            "python_ms": round(bare * 1e3, 2),
            **{e: {**Stats.of(t).as_ms(), "ratio": round(Stats.of(t).median / bare, 2)}
               for e, t in runs_of.items()},
        }  # fmt: skip
    return result


def _launched(install: Install, event: str) -> list[str]:
    """The hook as a client runs it: through the install's own launcher (a revision
    without one: its ``agent-room`` alone)."""
    launcher = install.source / "plugin" / "bin" / "agent-room-hook"
    if not launcher.exists():
        return [str(install.script), "hook", event]
    return ["sh", str(launcher), event]


# -- who and history -------------------------------------------------------------------


def seed(home: Path, sessions: int, messages: int) -> None:
    """A room seeded by the running install's own code (``--seed``)."""
    from bench_console import seed_big_room

    seed_big_room(home, sessions, messages)


def seeded(install: Install, tmp: Path, sessions: int, messages: int) -> Path:
    """A room for ``install``; the rooms of one source tree are seeded once and copied."""
    master = tmp / f"seed-{install.source.name}-{sessions}-{messages}" / "room"
    if not master.exists():
        subprocess.run(
            [str(install.python), __file__, "--seed", str(master), str(sessions), str(messages)],
            env=install.env(master),
            check=True,
            capture_output=True,
        )
    home = tmp / f"room-{install.slug}-{sessions}-{messages}" / "room"
    if not home.exists():
        shutil.copytree(master.parent, home.parent)
    return home


READS = (
    ("who", 50, 200, ["who"]),
    ("who", 500, 200, ["who"]),
    ("who", 2000, 200, ["who"]),
    ("history 20", 40, 10_000, ["history", "20"]),
    ("history 20", 40, 1_000_000, ["history", "20"]),
)


def measure_reads(
    installs: Sequence[Install], runs: int, tmp: Path, step: Callable[[str], None]
) -> dict[str, Any]:
    step("who and history: seeding rooms (1,000,000 messages take a while)")
    cases = []
    for what, sessions, messages, args in READS:
        for install in installs:
            home = seeded(install, tmp, sessions, messages)
            cases.append(
                (install, f"{what} @ {sessions} sessions, {messages:,} messages", home, args)
            )
            timed([str(install.script), *args], install.env(home))  # migrated, compiled
    found: dict[tuple[str, str], list[float]] = {}
    step(f"who and history: {runs} rounds")
    for r in range(runs):
        for install, label, home, args in cases[r % len(cases) :] + cases[: r % len(cases)]:
            found.setdefault((install.label, label), []).append(
                timed([str(install.script), *args], install.env(home))
            )
        for install in installs:
            found.setdefault((install.label, "python -c pass"), []).append(
                timed([str(install.python), "-c", "pass"], install.env(tmp))
            )
    result: dict[str, Any] = {}
    for (label, what), times in found.items():
        result.setdefault(label, {})[what] = Stats.of(times).as_ms()
    return result


# -- CPU at rest -----------------------------------------------------------------------


def measure_rest(
    installs: Sequence[Install], seconds: float, hooks: int, tmp: Path, step: Callable[[str], None]
) -> dict[str, Any]:
    """The watcher and the console at rest beside a bare Textual app, and the console's
    hook-to-screen time (``_rest``)."""
    from _rest import measure_rest as measured

    return measured(installs, seconds, hooks, tmp, step)


# -- the report ------------------------------------------------------------------------


def report(data: dict[str, Any], labels: list[str], current: list[str]) -> list[str]:
    """Print the tables; return the budgets that failed."""
    failed: list[str] = []

    def cells(values: dict[str, str]) -> list[str]:
        return [values.get(label, "-") for label in labels]

    if "send" in data:
        send = data["send"]

        def column(pick: Callable[[dict[str, Any]], float]) -> list[str]:
            return cells({k: f"{pick(v):.1f}" for k, v in send.items()})

        rows = [
            ["median ms", *column(lambda v: v["send"]["median_ms"])],
            ["p95 ms", *column(lambda v: v["send"]["p95_ms"])],
            ["the send process alone, median ms", *column(lambda v: v["process"]["median_ms"])],
            ["floor ms (python + commit + tmux)", *column(lambda v: v["floor_ms"])],
            ["python -c pass ms", *column(lambda v: v["python"]["median_ms"])],
        ]
        print_table(["send -> line submitted", *labels], rows, title="send -> the nudge submitted")
        for label in current:
            s = send[label]["send"]
            if s["median_ms"] > SEND_MEDIAN_MS or s["p95_ms"] > SEND_P95_MS:
                failed.append(f"{label}: send median {s['median_ms']} / p95 {s['p95_ms']} ms")
    if "hooks" in data:
        hooks = data["hooks"]
        rows = [
            ["python -c pass ms", *cells({k: f"{v['python_ms']:.1f}" for k, v in hooks.items()})]
        ]
        for event in HOOK_EVENTS:
            shown = {
                k: f"{v[event]['median_ms']:.1f} ({v[event]['ratio']:.2f}x)"
                for k, v in hooks.items()
            }
            rows.append([f"{event} ms (x python)", *cells(shown)])
        for event in HOOK_EVENTS:
            shown = {
                k: f"{v[DIRECT + event]['median_ms']:.1f} ({v[DIRECT + event]['ratio']:.2f}x)"
                for k, v in hooks.items()
                if DIRECT + event in v
            }
            rows.append([f"{DIRECT}{event} ms", *cells(shown)])
        title = "Hooks through the plugin's launcher, and agent-room hook alone"
        print_table(["hook, median", *labels], rows, title=title)
        for label in current:
            worst = max(hooks[label][e]["ratio"] for e in HOOK_EVENTS)
            if worst > HOOK_RATIO:
                failed.append(f"{label}: a hook at {worst}x python -c pass")
    if "reads" in data:
        reads = data["reads"]
        whats = list(next(iter(reads.values())))
        rows = [
            [w, *cells({k: f"{v[w]['median_ms']:.1f}" for k, v in reads.items()})] for w in whats
        ]
        print_table(["median ms", *labels], rows, title="who and history as the room grows")
        pairs = [
            ("who @ 50 ", "who @ 2000 "),
            ("history 20 @ 40 sessions, 10,000", "history 20 @ 40 sessions, 1,000,000"),
        ]
        for label in current:
            r = reads[label]
            for small, big in pairs:
                a = next(v for k, v in r.items() if k.startswith(small))["median_ms"]
                b = next(v for k, v in r.items() if k.startswith(big))["median_ms"]
                if b > a * FLAT_RATIO:
                    failed.append(f"{label}: {big} {b} ms against {a} ms")
    if "rest" in data:
        rest = data["rest"]
        cpu = rest["cpu_pct"]
        rows = [
            [f"{kind}, % of a core", *cells({k: f"{cpu[f'{k} {kind}']:.2f}" for k in labels})]
            for kind in ("watch", "console")
        ]
        bare = f"{cpu['bare Textual app']:.2f}"
        rows.append(["bare Textual app (the floor)", *cells(dict.fromkeys(labels, bare))])
        shown = {
            k: f"{v['from_start']['median_ms']:.0f} / {v['from_start']['p95_ms']:.0f}"
            for k, v in rest["hook_to_screen"].items()
        }
        rows.append(["console: hook start -> screen, median / p95 ms", *cells(shown)])
        load = rest["load_average"]
        title = f"At rest, {AGENTS} idle agents (load average {load[0]:.2f} -> {load[1]:.2f})"
        print_table(["CPU at rest", *labels], rows, title=title)
        for label in current:
            for kind in ("watch", "console"):
                if cpu[f"{label} {kind}"] > REST_PCT:
                    failed.append(f"{label}: {kind} at rest {cpu[f'{label} {kind}']} %")
            latency = rest["hook_to_screen"][label]["from_start"]["median_ms"]
            if latency > HOOK_TO_SCREEN_MS:
                failed.append(f"{label}: hook to screen median {latency} ms")
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="few runs: a smoke run")
    parser.add_argument("--runs", type=int, help="rounds per figure")
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    parser.add_argument("--wheel", action="store_true", help="also a wheel in a fresh venv")
    parser.add_argument("--only", nargs="+", choices=("send", "hooks", "reads", "rest"))
    parser.add_argument("--rest-seconds", type=float, help="CPU window at rest")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--seed", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed:
        seed(Path(args.seed[0]), int(args.seed[1]), int(args.seed[2]))
        return 0
    runs = args.runs or (3 if args.quick else 30)
    rest_seconds = args.rest_seconds or (5.0 if args.quick else 30.0)
    parts = args.only or ["send", "hooks", "reads", "rest"]
    step = progress(args.quiet)
    data: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agent-room-floor-") as name:
        tmp = Path(name)
        worktree = baseline_worktree(args.baseline, tmp) if args.baseline else None
        try:
            installs = installs_of(args.wheel, args.baseline, worktree, tmp, step)
            if "send" in parts:
                data["send"] = measure_send(installs, runs, tmp, step)
            if "hooks" in parts:
                data["hooks"] = measure_hooks(installs, runs, tmp, step)
            if "reads" in parts:
                data["reads"] = measure_reads(installs, max(runs // 2, 3), tmp, step)
            if "rest" in parts:
                hooks = 4 if args.quick else 10
                data["rest"] = measure_rest(installs, rest_seconds, hooks, tmp, step)
        finally:
            if worktree is not None:
                remove_worktree(worktree)
    labels = [i.label for i in installs]
    current = [i.label for i in installs if i.source == ROOT]
    failed = report(data, labels, current)
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    for problem in failed:
        print(f"  FAIL {problem}")
    print(f"Overall: {'FAIL' if failed else 'PASS'}{' (quick run)' if args.quick else ''}")
    path = write_result(
        "floor",
        {"quick": args.quick, "runs": runs, "baseline": args.baseline, "git": git_state(),
         "installs": labels, "load_average": os.getloadavg(), **data, "failed": failed},
    )  # fmt: skip
    print(f"Results: {path}")
    return 1 if failed and not args.quick else 0


if __name__ == "__main__":
    sys.exit(main())
