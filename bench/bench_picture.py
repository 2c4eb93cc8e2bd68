"""The console's picture, measured apart: CPU per room snapshot on the event loop.

The console (``make_app``, showing only the snapshots it is given: no reader, no workers)
runs headless at 200x50; it is fed ``--pictures`` snapshots of a steady stream in a room
of ``--agents`` agents: each picture the flow moves on by one event (a message sent, its
delivery and its reading by turns), the sender's turn starts or ends, and every other
picture one more message counts in the traffic. Reported: the CPU time (this process)
per picture, split into the snapshot's handling (setting it, the widgets' watchers) and
the rest (Textual's layout and drawing until the screen is idle again).

    python bench/bench_picture.py [--agents 50] [--pictures 200]

Run it with another tree's code by putting that tree first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import replace
from typing import Any

from agent_room.core.snapshot import Edge, FlowEvent, RoomSnapshot, SessionRow, TreeRow
from agent_room.room.enter import Where
from agent_room.ui.app import make_app
from agent_room.ui.settings import ConsoleSettings

T0 = 1_790_000_000.0
FLOW = 60
GAP = 0.1
"""Seconds between pictures (the reader's are 0.5 s apart)."""


class _Mux:
    """No multiplexer: the console here enters nothing."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


class _Probe:
    """Every agent runs."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        return pid > 0 or start_ticks is not None


def stream(agents: int, pictures: int) -> list[RoomSnapshot]:
    """The snapshots of a steady stream: one event and one turn moved per picture."""
    names = [f"agent{n:02d}" for n in range(agents)]
    sessions = [
        SessionRow(
            name=name, session_id=f"s-{name}", agent="claude", state="idle",
            cwd=f"/srv/{name}", pane=f"%{n}", tmux_socket="/tmp/tmux", pid=1000 + n,
            started_at=T0 - 3600 + n,
        )
        for n, name in enumerate(names)
    ]  # fmt: skip
    counts: dict[tuple[str, str], int] = {}
    for n, name in enumerate(names):
        for step in (1, 2, 3):
            counts[(name, names[(n + step) % agents])] = 20 + (n * step) % 17
    flow: list[FlowEvent] = []
    event_id = 0
    message = 0
    shots = []
    for picture in range(pictures + FLOW):
        sender = picture % agents
        recipient = (sender + 1) % agents
        kind = ("sent", "delivered", "read")[picture % 3]
        if kind == "sent":
            message += 1
        status = {"sent": "queued", "delivered": "delivered", "read": "read"}[kind]
        event_id += 1
        flow.append(
            FlowEvent(
                id=event_id, at=T0 + picture / 2, kind=kind, message_id=message,
                message_kind="message", sender=names[sender], recipient=names[recipient],
                status=status, summary=f"message {message}: the next step of the plan, "
                "and what the tests said about it",
            )
        )  # fmt: skip
        if kind != "sent":  # the message's earlier events show its status now
            flow = [replace(e, status=status) if e.message_id == message else e for e in flow]
        flow = flow[-FLOW:]
        turn = {"sent": (sender, "busy"), "delivered": (recipient, "busy")}
        moved, state = turn.get(kind, (recipient, "idle"))  # a turn starts or ends
        sessions[moved] = replace(sessions[moved], state=state)
        if picture % 2:
            pair = (names[sender], names[recipient])
            counts[pair] = counts.get(pair, 0) + 1
        if picture < FLOW:
            continue
        tree = tuple(
            TreeRow(label=s.name, session_id=s.session_id, state=s.state, depth=0) for s in sessions
        )
        traffic = tuple(Edge(a, b, c) for (a, b), c in sorted(counts.items()))
        shots.append(
            RoomSnapshot(
                taken_at=T0 + picture / 2, home="/room", sessions=tuple(sessions), tree=tree,
                flow=tuple(flow), traffic=traffic, messages=message,
            )
        )  # fmt: skip
    return shots


async def measure(agents: int, pictures: int) -> dict[str, float]:
    """CPU per picture: handling the snapshot, and drawing it."""
    shots = stream(agents, pictures + 20)
    settings = ConsoleSettings(
        home="/room", live=False, watch=False, deliver=False, liveness=False, utc=True,
        theme_dirs=(),
    )  # fmt: skip
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    app = make_app(settings, mux=_Mux(), probe=_Probe(), where=where, snapshot=shots[0])
    handle: list[float] = []
    whole: list[float] = []
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause(0.5)
        for index, shot in enumerate(shots[1:]):
            start = time.process_time()
            app.snapshot = shot
            set_at = time.process_time()
            await asyncio.sleep(GAP)  # the screen's updates (60 a second) come in it
            end = time.process_time()
            if index >= 20:  # the first pictures warm the caches up
                handle.append(set_at - start)
                whole.append(end - start)
    ms = 1000.0
    return {
        "pictures": len(whole),
        "per_picture_ms": statistics.mean(whole) * ms,
        "median_ms": statistics.median(whole) * ms,
        "handling_ms": statistics.mean(handle) * ms,
        "drawing_ms": (statistics.mean(whole) - statistics.mean(handle)) * ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--pictures", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(measure(args.agents, args.pictures))
    print(json.dumps({key: round(value, 2) for key, value in result.items()}))


if __name__ == "__main__":
    main()
