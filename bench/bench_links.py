"""Benchmark of the link injector: what a pass costs, at rest and with turns to judge.

Run it from the project root::

    .venv/bin/python bench/bench_links.py            # the full run (about 20 s)
    .venv/bin/python bench/bench_links.py --quick    # a smoke run with small counts

The injector runs a pass on every change to the room (every hook of every agent writes)
and at least every half second, so its pass at rest must stay cheap as links pile up;
the Stop hook itself does nothing for links (it records the turn, as it always did), so
the link's cost on the agent's turn is this pass, paid by the watcher, not the agent.

In a throw-away room with ``N`` pairs of registered sessions, each pair linked:

a. *at rest*: ``Crossings.run_once`` with nothing new (the common case), N = 1, 10, 50;
b. *judging*: one turn of each link's responder finished since the last pass, each
   crossing to its peer (a message, the budget, the verdict): ms per crossing;
c. *timers*: ``Links.fire_due`` and ``next_due`` with 200 pending timers, none due.

Budgets: a pass at rest over 50 links under 20 ms (median); a crossing under 5 ms (the
pass's time divided by the crossings it made, counted by the links themselves); every
responder's turn must cross, or the figure measures nothing. The exit code is 1 when a
budget fails. Results go to ``bench/results/links.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import median, ms, p95, print_table, write_result

from agent_room.room.crossing import Crossings
from agent_room.room.links import Links
from agent_room.room.service import Room

REST_BUDGET = 0.020
CROSSING_BUDGET = 0.005


def make_room(home: Path, pairs: int) -> Room:
    """A room with ``pairs`` linked pairs of idle sessions (loop breaker off)."""
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    links = Links(room)
    links.configure(loop=(0, 60.0), budget=1000)
    for n in range(pairs):
        for side in ("a", "b"):
            room.store.register(
                {"session_id": f"{side}{n}", "state": "idle"},
                wanted=f"{side}{n}",
                explicit=True,
                at=time.time(),
                alive=lambda *_: True,
            )
        links.open(f"a{n}", f"b{n}", "go")
    return room


def finish_turns(room: Room, pairs: int, round_: int) -> None:
    """One finished turn for every responder, as its hooks record it: an answer to its
    peer (the only turns that cross)."""
    for n in range(pairs):
        sid = f"b{n}"
        room.store.start_turn(sid, prompt_id=None, kind="crossing", prompt="x", at=time.time())
        room.store.stop_turn(sid, output=f"finding {round_}", failed=False, at=time.time())


def crossings_made(room: Room) -> int:
    """How many outputs have crossed so far, over every link (the links' own counts)."""
    return sum(int(row["crossings"]) for row in Links(room).links())


def timed(call: Any, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def main() -> int:
    """Run the benchmark; 1 when a budget fails."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    args = parser.parse_args()
    runs = 20 if args.quick else 200
    rounds = 3 if args.quick else 20
    results: dict[str, Any] = {}
    rows = []
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o700)
        for pairs in (1, 10, 50):
            room = make_room(Path(tmp) / f"room{pairs}", pairs)
            engine = Crossings(room)
            engine.run_once()
            rest = timed(engine.run_once, runs)
            judging = []
            crossed = 0
            for round_ in range(rounds):
                finish_turns(room, pairs, round_)
                before = crossings_made(room)
                start = time.perf_counter()
                engine.run_once()
                elapsed = time.perf_counter() - start
                made = crossings_made(room) - before
                crossed += made
                if made:  # a pass that judged but crossed nothing is no crossing's cost
                    judging.append(elapsed / made)
            expected = pairs * rounds
            ok &= crossed == expected  # every responder's turn crosses to its peer
            rows.append(
                [
                    f"{pairs} links",
                    ms(median(rest)),
                    ms(p95(rest)),
                    ms(median(judging)) if judging else "-",
                    ms(p95(judging)) if judging else "-",
                    f"{crossed}/{expected}",
                ]
            )
            results[f"links_{pairs}"] = {
                "rest_median": median(rest),
                "rest_p95": p95(rest),
                "per_crossing_median": median(judging) if judging else None,
                "crossings": crossed,
                "crossings_expected": expected,
            }
            if pairs == 50:
                ok &= median(rest) < REST_BUDGET
                ok &= bool(judging) and median(judging) < CROSSING_BUDGET
            room.close()
        room = make_room(Path(tmp) / "timers", 1)
        links = Links(room)
        for n in range(200):
            links.set_timer("a0", "anchor", "1h", f"task {n}")
        fire = timed(links.fire_due, runs)
        due = timed(links.next_due, runs)
        rows.append(["200 timers: fire_due", ms(median(fire)), ms(p95(fire)), "-", "-", "-"])
        rows.append(["200 timers: next_due", ms(median(due)), ms(p95(due)), "-", "-", "-"])
        results["timers_200"] = {"fire_due_median": median(fire), "next_due_median": median(due)}
        room.close()
    print_table(
        ["injector pass", "rest median", "rest p95", "per crossing", "p95", "crossed"],
        rows,
        title=f"Crossings.run_once ({runs} passes at rest, {rounds} rounds of crossings)",
    )
    verdict = "PASS" if ok else "FAIL"
    print(
        f"\nBudgets (50 links: a pass at rest < {REST_BUDGET * 1000:.0f} ms, a crossing"
        f" < {CROSSING_BUDGET * 1000:.0f} ms; every responder's turn crossed): {verdict}"
    )
    print(f"Results: {write_result('links', results)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
