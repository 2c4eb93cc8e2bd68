"""The console while agents talk: key to screen in a storm, and CPU per message.

Run it from the project root::

    .venv/bin/python bench/bench_console_storm.py                 # 50 agents x 20 messages
    .venv/bin/python bench/bench_console_storm.py --quick         # 10 agents x 5 messages
    .venv/bin/python bench/bench_console_storm.py --baseline REV  # beside a revision's console

The room is ``bench_storm``'s: stand-in agents (``tests/standin_agent.py``, firing the real
hooks) in panes of a private tmux server, registered in a throw-away room. In two more
windows of the same server: the console (``agent-room`` with no arguments, as a user
starts it, with no setting changed) and the floor, a bare Textual app (``_rest.BARE_APP``:
a header, a table of 50 rows, a footer). Who delivers (``--deliverer``):

- ``background`` (the default, what a user gets): whatever the console does when no
  deliverer runs. This tree's console starts the room's background deliverer (``start``'s
  ``agent-room watch --background``) and stands by beside it; a revision before that
  delivers itself. The background watch's own CPU per message is reported beside the
  console's.
- ``console``: the console with the room's ``watch`` setting off (``AGENT_ROOM_WATCH=off``):
  it delivers itself.
- ``watch``: one ``agent-room watch`` started first, which then holds the lease.

1. Key to screen in the storm: every agent sends its messages at once (``bench_storm``'s
   storm). Until the room has drained, a cursor key (Down, then Up, in turns) goes to the
   console's sessions table and to the bare app's table by turns, every ``--key-gap``
   seconds; the time from ``send-keys`` until the pane shows the cursor on another row
   (``capture-pane -e`` every 5 ms: the cursor row is the bold one).
2. CPU per message: the agents then send at a steady rate (2 messages a second, each a
   fresh ``agent-room send`` from one agent to the next) for ``--steady`` seconds; the
   console's CPU time (``/proc/PID/stat``) from the first send until the room has
   drained, divided by the messages delivered (beside it the same console's CPU over
   the quiet seconds just before). Only the agents talk in this window: it is what the
   budget holds (an operator's key costs the console about as much as a message's
   picture, and would be counted as the messages' cost).
3. A key just after a message: the same steady sends once more, with a key to the
   console after each send, timed the same way; the CPU per message of this window
   (the messages and the keys) is reported beside the first.

With ``--baseline REV`` the same runs again with that revision's console (a fresh room
each; the agents, sends and bare app stay the tree's), the installs by turns.

``--engine postgresql`` runs every room on PostgreSQL instead of SQLite: a throw-away
cluster of Debian's server (``tests/pgcluster.py``) on this machine, each room a schema
named in its ``room.conf`` before the room is made, as the guide to several machines has
a user do. The console paces itself by the notifications its watch hears there (SQLite
has a change count); this run shows whether that holds the same budget.

Budget (the tree's console): key to screen in the storm at most 2x the bare app's, at the
median and at p95; at most 10 ms of console CPU per message. Results go to
``bench/results/console_storm.json``; the exit code is 1 when the budget fails.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import (
    ROOT,
    Stats,
    git_state,
    print_table,
    progress,
    wait_until,
    with_given,
    write_result,
)
from _installs import Install, baseline_worktree, console_command, installs_of, remove_worktree
from _rest import bare_command
from _tmux_observer import TmuxServer, perf
from bench_console import cpu_seconds
from bench_storm import Storm

sys.path.insert(0, str(ROOT))  # the throw-away cluster of the tests
from tests.pgcluster import Cluster, server_bin

RATIO_BUDGET = 2.0
"""Key to screen in the storm: at most this many times the bare app's (median and p95)."""
CPU_BUDGET_MS = 10.0
"""Console CPU per delivered message at the steady rate."""
CURSOR = re.compile(r"\x1b\[(?:0;)?1m(?:\x1b\[[0-9;]*m)* (@?agent-?\d+) ")
"""The cursor row of either table: bold, then the row's name (``@agent07``, ``agent-07``)."""


@dataclass(frozen=True)
class Sizes:
    """How much each part does."""

    agents: int = 50
    messages: int = 20
    steady_seconds: float = 30.0
    rate: float = 2.0
    """Messages a second in the steady part (the whole room's)."""
    key_gap: float = 0.2
    """Seconds between key presses in the storm."""
    settle_seconds: float = 3.0


QUICK = Sizes(agents=10, messages=5, steady_seconds=10.0, settle_seconds=2.0)


class Screen:
    """One app's pane: its cursor row, and a key's time until the cursor moves."""

    def __init__(self, server: TmuxServer, pane: str) -> None:
        self.server = server
        self.pane = pane
        self.down = True

    def cursor(self) -> str | None:
        found = CURSOR.search(self.server.run("capture-pane", "-e", "-p", "-t", self.pane))
        return found[1] if found else None

    def pid(self) -> int:
        return int(self.server.run("display-message", "-p", "-t", self.pane, "#{pane_pid}"))

    def key(self) -> float:
        """Move the cursor a row (down and up in turns); seconds until it shows."""
        before = self.cursor()
        key, self.down = ("Down" if self.down else "Up"), not self.down
        started = perf()
        self.server.run("send-keys", "-t", self.pane, key)

        def moved() -> bool:
            now = self.cursor()
            return now is not None and now != before

        wait_until(moved, timeout=20, step=0.005, what=f"{key} on screen in {self.pane}")
        return perf() - started


def storm_keys(
    storm: Storm, screens: dict[str, Screen], gap: float
) -> tuple[dict[str, list[float]], float]:
    """The storm, and keys to each screen by turns until it has drained: the times, and
    the seconds from the storm's start until the room drained."""
    times: dict[str, list[float]] = {label: [] for label in screens}
    done = threading.Event()
    started = perf()

    def sends() -> None:
        storm.storm()
        wait_until(storm.drained, timeout=600, step=0.2, what="the room to drain")
        done.set()

    thread = threading.Thread(target=sends, daemon=True)
    thread.start()
    while not done.is_set():
        for label, screen in screens.items():
            times[label].append(screen.key())
            time.sleep(gap)
    thread.join()
    return times, perf() - started


def steady(
    storm: Storm,
    console: Screen,
    sizes: Sizes,
    step: Callable[[str], None],
    deliverer: int | None = None,
) -> dict[str, Any]:
    """Sends at a steady rate, twice: the console's CPU per delivered message while only
    the agents talk (the budget), then the same with a key to the console after each send
    (the operator's keys cost CPU too: reported beside it, with each key's time to
    screen). ``deliverer``: the pid of a background deliverer whose CPU is reported
    beside the console's."""
    pid = console.pid()
    before, started = cpu_seconds(pid), perf()
    time.sleep(sizes.settle_seconds)  # the same console, quiet: what it spends without messages
    rest_pct = 100 * (cpu_seconds(pid) - before) / (perf() - started)
    talk = _steady_window(storm, console, sizes, pid, first=0, keys=False, helper=deliverer)
    step(f"steady: {talk['delivered']} delivered over {talk['window_s']:.1f} s,"
         f" {talk['cpu_ms_per_message']:.1f} ms of CPU each")  # fmt: skip
    count = round(sizes.steady_seconds * sizes.rate)
    keyed = _steady_window(storm, console, sizes, pid, first=count, keys=True)
    step(f"steady with keys: {keyed['cpu_ms_per_message']:.1f} ms of CPU per message")
    return {
        **talk,
        "cpu_pct_quiet_before": round(rest_pct, 2),
        "with_keys": {k: v for k, v in keyed.items() if k != "key_after_message"},
        "key_after_message": keyed["key_after_message"],
    }


def _steady_window(
    storm: Storm,
    console: Screen,
    sizes: Sizes,
    pid: int,
    *,
    first: int,
    keys: bool,
    helper: int | None = None,
) -> dict[str, Any]:
    """One steady window of sends (numbered from ``first``), with a key after each send
    or not: the console's CPU from the first send until the room has drained (and the
    ``helper`` process's, a background deliverer, beside it)."""
    count = round(sizes.steady_seconds * sizes.rate)
    names = storm.names
    times: list[float] = []
    before, started = cpu_seconds(pid), perf()
    helper_before = cpu_seconds(helper) if helper is not None else 0.0
    sent = []
    for n in range(first, first + count):
        due = started + (n - first) / sizes.rate
        time.sleep(max(0.0, due - perf()))
        sender, recipient = names[n % len(names)], names[(n + 1) % len(names)]
        sent.append(storm.send(sender, recipient, f"steady-{n:06d}"))
        if keys and perf() < due + 1 / sizes.rate - 0.2:  # room for the key before the next
            times.append(console.key())
    wait_until(storm.drained, timeout=120, step=0.1, what="the steady sends to drain")
    elapsed, used = perf() - started, cpu_seconds(pid) - before
    helper_used = cpu_seconds(helper) - helper_before if helper is not None else None
    ids = [s.message_id for s in sent if s.message_id is not None]
    with storm.db() as conn:
        delivered = conn.execute(
            f"SELECT count(*) FROM messages WHERE status IN ('delivered', 'read') AND id IN"
            f" ({storm.marks(len(ids))})",
            ids,
        ).fetchone()[0]
    per = used / delivered * 1e3 if delivered else float("nan")
    found: dict[str, Any] = {
        "sent": count,
        "delivered": int(delivered),
        "window_s": round(elapsed, 2),
        "cpu_s": round(used, 3),
        "cpu_pct": round(100 * used / elapsed, 2),
        "cpu_ms_per_message": round(per, 2),
        "key_after_message": Stats.of(times).as_ms() if times else None,
    }
    if helper_used is not None and delivered:
        found["background_deliverer_cpu_ms_per_message"] = round(helper_used / delivered * 1e3, 2)
    return found


def run_install(
    install: Install,
    sizes: Sizes,
    deliverer: str,
    tmp: Path,
    step: Callable[[str], None],
    cluster: Cluster | None = None,
) -> dict[str, Any]:
    """One fresh room with ``install``'s console: the storm with keys, then the steady sends;
    on ``cluster``'s PostgreSQL if given."""
    scratch = tmp / install.slug
    scratch.mkdir()
    (scratch / "config").mkdir()
    schema = re.sub(r"\W", "_", f"storm_{install.slug}_{os.getpid()}").lower()
    database = cluster.new_room(schema) if cluster is not None else ""
    storm = Storm(scratch, sizes.agents, sizes.messages, install.source, database)
    try:
        step(f"{install.label}: {sizes.agents} stand-in agents registering")
        storm.start_agents()
        if deliverer == "watch":
            storm.start_watch()
        # as a user opens it (the room's settings untouched), unless told otherwise
        without = ("AGENT_ROOM_WATCH",) if deliverer == "background" else ()
        command = console_command(install, storm.home, scratch / "config", without=without)
        console = Screen(storm.server, storm.server.new_window("console", command))
        bare = Screen(storm.server, storm.server.new_window("bare", bare_command()))
        try:
            wait_until(lambda: console.cursor() is not None and bare.cursor() is not None,
                       timeout=60, step=0.05, what="both tables on screen")  # fmt: skip
        except TimeoutError as timeout:
            shown = storm.server.run("capture-pane", "-p", "-t", console.pane)
            raise RuntimeError(f"{install.label}: no cursor row on screen:\n{shown}") from timeout
        if deliverer == "background":  # the console's background watch, or the console
            wait_until(lambda: storm.deliverer() is not None, timeout=30, step=0.1,
                       what="a deliverer to take the lease")  # fmt: skip
            holder = storm.deliverer()
        else:
            watch = storm.watch.pid if storm.watch is not None else None
            holder = console.pid() if deliverer == "console" else watch
            wait_until(lambda: storm.deliverer() == holder, timeout=30, step=0.1,
                       what=f"the {deliverer} to take the deliverer's lease")  # fmt: skip
        background = holder if deliverer == "background" and holder != console.pid() else None
        time.sleep(sizes.settle_seconds)
        step(f"{install.label}: the storm, {sizes.agents} x {sizes.messages}, keys by turns")
        load = os.getloadavg()[0]
        times, drain_s = storm_keys(storm, {"console": console, "bare": bare}, sizes.key_gap)
        for label, seconds in times.items():
            stats = Stats.of(seconds)
            step(f"{install.label}: {label} key to screen median {stats.median * 1e3:.0f} ms,"
                 f" p95 {stats.p95 * 1e3:.0f} ms ({stats.runs} keys)")  # fmt: skip
        steady_found = steady(storm, console, sizes, step, background)
        failed = [s.error for s in storm.sends if s.message_id is None]
    finally:
        storm.stop()
    return {
        "load_average": [load, os.getloadavg()[0]],
        "storm_drained_s": round(drain_s, 2),
        "key_to_screen": {label: Stats.of(seconds).as_ms() for label, seconds in times.items()},
        "steady": steady_found,
        "failed_sends": failed[:10],
    }


def checks(found: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """The budget, for one install's run."""
    keys = found["key_to_screen"]
    rows = []
    for stat in ("median_ms", "p95_ms"):
        console, bare = keys["console"][stat], keys["bare"][stat]
        ratio = console / bare
        rows.append((f"key to screen in the storm, {stat[:-3]}, console / bare",
                     f"{console:.0f} / {bare:.0f} ms = {ratio:.1f}x", f"<= {RATIO_BUDGET:.0f}x",
                     ratio <= RATIO_BUDGET))  # fmt: skip
    per = found["steady"]["cpu_ms_per_message"]
    rows.append(("console CPU per message, steady", f"{per:.1f} ms",
                 f"<= {CPU_BUDGET_MS:.0f} ms", per <= CPU_BUDGET_MS))  # fmt: skip
    rows.append(("every send stored", f"{len(found['failed_sends'])} failed", "0",
                 not found["failed_sends"]))  # fmt: skip
    return rows


def _cell(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10 agents x 5, 10 s steady")
    parser.add_argument("--agents", type=int, help="agents in the room (default 50)")
    parser.add_argument("--messages", type=int, help="messages each agent sends (default 20)")
    parser.add_argument("--steady", type=float, help="seconds of steady sends (default 30)")
    parser.add_argument("--rate", type=float, help="steady messages a second (default 2)")
    parser.add_argument("--key-gap", type=float, help="seconds between keys in the storm")
    parser.add_argument(
        "--deliverer", choices=("background", "console", "watch"), default="background",
        help="who delivers: what the console does as a user opens it (default), the console"
        " itself (the watch setting off), or an agent-room watch started first",
    )  # fmt: skip
    parser.add_argument("--baseline", metavar="REV", help="also run this revision's console")
    parser.add_argument(
        "--engine", choices=("sqlite", "postgresql"), default="sqlite",
        help="the rooms' engine (postgresql: a throw-away cluster of Debian's server)",
    )  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    sizes = with_given(
        QUICK if args.quick else Sizes(), agents=args.agents, messages=args.messages,
        steady_seconds=args.steady, rate=args.rate, key_gap=args.key_gap,
    )  # fmt: skip
    if sizes.messages >= sizes.agents:
        parser.error("each agent sends to others only: --messages must be below --agents")
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is required: the console is measured in a real tmux pane")
    compileall.compile_dir(ROOT / "agent_room", quiet=1)  # timed as installed
    step = progress(args.quiet, "[bench_console_storm]")
    cluster = None
    if args.engine == "postgresql":
        bindir = server_bin()
        if bindir is None:
            raise SystemExit("PostgreSQL's server is not installed (Debian's postgresql)")
        cluster = Cluster(bindir)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agent-room-console-storm-") as raw:
        tmp = Path(raw)
        worktree = baseline_worktree(args.baseline, tmp) if args.baseline else None
        try:
            if worktree is not None:
                compileall.compile_dir(worktree / "agent_room", quiet=1)
            installs = installs_of(False, args.baseline, worktree, tmp, step)
            for install in reversed(installs):  # the baseline first, then the tree's
                results[install.label] = run_install(
                    install, sizes, args.deliverer, tmp, step, cluster
                )
        finally:
            if worktree is not None:
                remove_worktree(worktree)
            if cluster is not None:
                cluster.destroy()
    labels = list(reversed(results))
    rows = []
    for name, get in (
        ("console key to screen in the storm, median ms",
         lambda r: r["key_to_screen"]["console"]["median_ms"]),
        ("  p95 ms", lambda r: r["key_to_screen"]["console"]["p95_ms"]),
        ("  max ms", lambda r: r["key_to_screen"]["console"]["max_ms"]),
        ("  keys", lambda r: r["key_to_screen"]["console"]["runs"]),
        ("bare app key to screen, median ms", lambda r: r["key_to_screen"]["bare"]["median_ms"]),
        ("  p95 ms", lambda r: r["key_to_screen"]["bare"]["p95_ms"]),
        ("storm drained, s after its start", lambda r: r["storm_drained_s"]),
        ("steady: console CPU per message, ms", lambda r: r["steady"]["cpu_ms_per_message"]),
        ("steady: console CPU, % of a core", lambda r: r["steady"]["cpu_pct"]),
        ("steady: its background deliverer's CPU per message, ms",
         lambda r: r["steady"].get("background_deliverer_cpu_ms_per_message", "-")),
        ("  quiet just before, % of a core", lambda r: r["steady"]["cpu_pct_quiet_before"]),
        ("steady: messages delivered", lambda r: r["steady"]["delivered"]),
        ("steady with a key after each message: console CPU per message, ms",
         lambda r: r["steady"].get("with_keys", {}).get("cpu_ms_per_message", "-")),
        ("steady: key after a message, median ms",
         lambda r: (r["steady"]["key_after_message"] or {}).get("median_ms", "-")),
        ("steady: key after a message, max ms",
         lambda r: (r["steady"]["key_after_message"] or {}).get("max_ms", "-")),
        ("load average at the storm", lambda r: f"{r['load_average'][0]:.1f}"),
    ):  # fmt: skip
        rows.append([name, *(_cell(get(results[label])) for label in labels)])
    print_table(
        ["measure", *labels], rows,
        title=f"Console in a storm: {sizes.agents} agents x {sizes.messages} messages, then"
        f" {sizes.rate:g}/s for {sizes.steady_seconds:g} s ({args.deliverer} delivers,"
        f" {args.engine})",
    )  # fmt: skip
    verdicts = checks(results["dev"])
    print_table(
        ["budget (dev)", "value", "budget", "verdict"],
        [[n, v, b, "PASS" if ok else "FAIL"] for n, v, b, ok in verdicts],
        title="",
    )
    passed = all(ok for *_rest, ok in verdicts)
    path = write_result(
        "console_storm",
        {
            "quick": args.quick,
            "sizes": asdict(sizes),
            "deliverer": args.deliverer,
            "engine": args.engine,
            "baseline_rev": args.baseline,
            "git": git_state(),
            "installs": results,
            "budget": {
                "ratio_to_bare": RATIO_BUDGET,
                "cpu_ms_per_message": CPU_BUDGET_MS,
                "checks": [{"measure": n, "value": v, "pass": ok} for n, v, _b, ok in verdicts],
                "pass": passed,
            },
        },
    )
    step(f"results in {path}")
    print(json.dumps({"pass": passed}))
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
