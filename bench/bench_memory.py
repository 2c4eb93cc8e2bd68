"""Benchmark of the room's memory against seed 002's own targets.

Run it from the project root::

    .venv/bin/python bench/bench_memory.py            # 20 MB transcript, 10,000 entities
    .venv/bin/python bench/bench_memory.py --quick    # 5 MB, fewer runs

In a throw-away room, with a transcript built from the real one in
``tests/fixtures/transcripts`` (its turns renumbered, its tool calls and file snapshots
kept) and registered as the sender's:

a. *follow*: the memory worker reads the whole transcript once (by byte offset, into
   FTS5-indexed items): the one-time cost of a transcript the room had not seen;
b. *handover context* (budget 200 ms, median): ``Memory.prepare`` of a handover from
   that sender once its transcript is followed (the worker follows transcripts as they
   grow): bm25 relevance, recency, the 5,000-token budget, the handover's entities;
c. *resume context* (budget 1 s, median): ``Checkpoints.context`` in the three modes
   from a checkpoint of that session;
d. *entity de-duplication* (budget 50 ms, median): one new mention with 10,000 entities
   of its type in the registry (a near-duplicate, and a new name);
e. *cycle check* (budget 100 ms, median): over 10,000 recent handovers among 100
   agents, the search itself, and as a request makes it (the handovers stored in a room
   and read back first).

Results go to ``bench/results/memory.json``; the exit code is 1 when a budget fails.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, median, ms, p95, print_table, progress, write_result

from agent_room.core.entities import Mention
from agent_room.core.handover import HandoverFields
from agent_room.room.checkpoints import Checkpoints
from agent_room.room.entities import Entities
from agent_room.room.memory import Memory
from agent_room.room.service import Room
from agent_room.store import memory as store_memory
from agent_room.turn.core.cycles import closes_cycle

FIXTURE = ROOT / "tests" / "fixtures" / "transcripts" / "spotter_excerpt_turn_end_compact.jsonl"
BUDGETS = {"handover context": 0.200, "resume context": 1.0, "entity": 0.050, "cycle": 0.100}


def build(path: Path, megabytes: int) -> int:
    """A transcript of about ``megabytes`` MB from the fixture's lines; return its size."""
    lines = [
        line
        for line in FIXTURE.read_bytes().splitlines()
        if b"compact_boundary" not in line and b"isCompactSummary" not in line
    ]
    target = megabytes * 1024 * 1024
    with path.open("wb") as out:
        turn = 0
        while out.tell() < target:
            for line in lines:
                renamed = line.replace(b"spotter-4te.3", f"spotter-{turn}".encode())
                out.write(renamed.replace(b"git status --short", f"git log -{turn}".encode()))
                out.write(b"\n")
            turn += 1
    return path.stat().st_size


def timed(call: Any, runs: int) -> list[float]:
    """Seconds of each of ``runs`` calls."""
    found = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        found.append(time.perf_counter() - start)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="5 MB, fewer runs")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    say = progress(args.quiet)
    megabytes, runs, entities_count = (5, 5, 10_000) if args.quick else (20, 15, 10_000)
    results: dict[str, Any] = {}
    rows: list[list[str]] = []
    failed: list[str] = []

    def record(name: str, values: list[float], budget: float | None) -> None:
        results[name] = {"median": median(values), "p95": p95(values), "runs": len(values)}
        verdict = "-"
        if budget is not None:
            results[name]["budget"] = budget
            verdict = "ok" if median(values) <= budget else "OVER"
            if verdict == "OVER":
                failed.append(name)
        rows.append(
            [name, ms(median(values)), ms(p95(values)), ms(budget) if budget else "-", verdict]
        )

    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        home = Path(tmp) / "room"
        room = Room.open({"AGENT_ROOM_HOME": str(home)})
        transcript = Path(tmp) / "api.jsonl"
        size = build(transcript, megabytes)
        say(f"transcript of {size / 1e6:.1f} MB")
        for name, path in (("api", str(transcript)), ("web", None)):
            room.store.register(
                {"session_id": f"s-{name}", "state": "idle", "transcript_path": path},
                wanted=name,
                explicit=True,
                at=room.clock(),
                alive=lambda *_: True,
            )
        memory = Memory(room)
        start = time.perf_counter()
        items = memory.follow("s-api", str(transcript))
        record(f"follow {megabytes} MB (once)", [time.perf_counter() - start], None)
        results["items"] = items
        say(f"followed: {items} items")

        fields = HandoverFields(
            what_changed="hook controllers traced",
            what_to_do="check the trace headers in hooks_controller and the otel config",
            contract="traceparent header",
        )
        handover = room.send_handover("api", "web", fields=fields)
        values = timed(lambda: memory.prepare(handover), runs)
        record("handover context", values, BUDGETS["handover context"])
        prepared = store_memory.context(room.store, handover)
        assert prepared is not None
        results["context_tokens"] = prepared["tokens"]

        checkpoints = Checkpoints(room)
        checkpoint = checkpoints.take_named("api")
        for mode, agent in (("full", None), ("partial", None), ("agent", "web")):
            values = timed(
                lambda m=mode, a=agent: checkpoints.context(f"#{checkpoint}", mode=m, agent=a),
                runs,
            )
            record(f"resume context ({mode})", values, BUDGETS["resume context"])

        registry = Entities(room)
        say(f"registering {entities_count} entities")
        for i in range(entities_count):
            registry.mention(
                Mention("function", f"module_{i % 97}.handler_{i}"), agent="api", source="bench"
            )
        counter = iter(range(10**6))
        record(
            f"entity: near-duplicate of 1 in {entities_count}",
            timed(
                lambda: registry.mention(
                    Mention("function", f"module_{(k := next(counter)) % 97}.handlr_{k}"),
                    agent="web",
                    source="bench",
                ),
                runs,
            ),
            BUDGETS["entity"],
        )
        record(
            f"entity: new among {entities_count}",
            timed(
                lambda: registry.mention(
                    Mention("function", f"zz_{next(counter)}_new_thing"),
                    agent="web",
                    source="bench",
                ),
                runs,
            ),
            BUDGETS["entity"],
        )
        room.close()

    rng = random.Random(2)
    agents = [f"agent-{i:03d}" for i in range(100)]
    edges = [(a, b) for a, b in (rng.sample(agents, 2) for _ in range(10_000))]
    record(
        "cycle check: 10,000 handovers, 100 agents",
        timed(lambda: closes_cycle(edges, "agent-000", "agent-001"), runs),
        BUDGETS["cycle"],
    )
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        room = Room.open({"AGENT_ROOM_HOME": str(Path(tmp) / "room")})
        say("storing 10,000 handovers among 100 agents")
        for sender, recipient in edges:
            room.store.add_message(
                kind="handover",
                sender=sender,
                recipient=recipient,
                body="work",
                at=room.clock(),
                status="held",
                handover_fields={},
            )
        newest = room.store.pending_handovers()[-1:]
        record(
            "cycle check as a request makes it (stored)",
            timed(lambda: room.handover_cycles(newest), runs),
            BUDGETS["cycle"],
        )
        room.close()

    print_table(["measure", "median", "p95", "budget", ""], rows, title="room memory")
    written = write_result("memory", {"transcript_mb": megabytes, "results": results})
    print(f"\nresults: {written}")
    if failed:
        print(f"over budget: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
