"""A seeded room for the console's tests: every session state, handovers, a message flow,
a link (one side anchored, one not).

Built through the room service and the registry on a real SQLite store with a frozen,
hand-advanced clock, so the same room (and the same picture) comes out on every run and
every machine: cwd values are fixed strings, never the test's temporary directory.
"""

from __future__ import annotations

from pathlib import Path

from agent_room.core.enums import SessionState
from agent_room.core.handover import HandoverFields
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.turn.store.sqlite import SqliteStore

T0 = 1_767_225_600.0
"""2026-01-01 00:00:00 UTC: the seeded room's first moment."""

LIVE_PID = 4242
"""The pid the seeded live sessions claim; the fake probe says it runs."""


class FrozenClock:
    """A clock that moves only when told."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


class AliveProbe:
    """Every process with ``LIVE_PID`` runs; any other does not."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        return pid == LIVE_PID


def _facts(
    name: str, pane: str | None, parent: str | None = None, transcript: str | None = None
) -> SessionFacts:
    return SessionFacts(
        session_id=f"sess-{name}",
        cwd=f"/srv/shop/{name}",
        transcript_path=transcript,
        pid=LIVE_PID,
        pid_start=100,
        pane=pane,
        tmux_socket="/tmp/tmux-1000/default",
        name=name,
        parent_hint=parent,
    )


def seed_room(home: Path, clock: FrozenClock | None = None) -> tuple[Room, FrozenClock]:
    """Fill a fresh room at ``home``; return the open room service and its clock."""
    clock = clock or FrozenClock()
    room = Room(SqliteStore(home), clock=clock)
    registry = Registry(room, AliveProbe())
    for name, pane, parent in (
        ("backend", "%1", None),
        ("frontend", "%2", None),
        ("api", "%3", "backend"),
        ("reviewer", "%4", "api"),
        ("docs", "%5", None),
    ):
        registry.register(_facts(name, pane, parent))
        clock.advance(37)
    room.join("ops", pane=None, agent="codex")
    registry.set_state("sess-backend", SessionState.BUSY)
    registry.set_state("sess-api", SessionState.WAITING)
    # docs had its turn before it ended: a conversation its client can resume
    room.store.start_turn(
        "sess-docs", prompt_id=None, kind="human", prompt="document the API", at=clock.now
    )
    room.store.stop_turn("sess-docs", output="Documented.", failed=False, at=clock.now)
    registry.set_state("sess-docs", SessionState.ENDED)
    room.store.record_subagent(
        {
            "agent_id": "a1b2c3d4e5f6",
            "session_id": "sess-backend",
            "agent_type": "Explore",
            "transcript_path": None,
            "output": "found it",
        },
        at=clock.advance(5),
    )

    clock.advance(60)
    first = room.send("backend", "frontend", "The orders endpoint now pages with a cursor.")
    clock.advance(4)
    room.store.mark_delivered("frontend", [first], at=clock.now, via="nudge")  # and so read
    clock.advance(9)
    clock.advance(20)
    room.send("frontend", "backend", "Thanks: switching the list view to the cursor now.")
    clock.advance(15)
    schema = room.send("api", "frontend", "Schema v3 is live on staging.")
    room.store.mark_read("frontend", [schema], at=clock.now)  # read in the inbox
    clock.advance(3)
    lost = room.send("backend", "docs", "Please document the cursor parameter.")
    nudge = room.store.record_nudge("docs", "sess-docs", [lost], "[agent-room] 1 new", at=clock.now)
    clock.advance(30)
    room.store.fail_nudge(nudge, [lost], "no receipt after 3 Enter retries", at=clock.now)

    clock.advance(40)
    approved = room.send_handover(
        "backend",
        "frontend",
        fields=HandoverFields(what_changed="orders API pages by cursor", what_to_do="update UI"),
    )
    clock.advance(25)
    room.approve(approved)
    clock.advance(30)
    room.send_handover(
        "frontend",
        "api",
        fields=HandoverFields(
            what_changed="list view needs a total count",
            what_to_do="add `total` to the orders response",
            files="web/src/orders/List.tsx",
        ),
    )
    clock.advance(45)
    room.send_handover(
        "api",
        "backend",
        fields=HandoverFields(
            what_changed="`total` needs a COUNT over orders",
            what_to_do="add an index so the count stays fast",
            files="api/orders.py; db/migrations/0042_orders_total.sql",
            breaking="none",
        ),
    )
    clock.advance(20)
    links = Links(room)
    links.open("backend", "frontend", "Which cursor format do you parse: opaque or offset?")
    links.set_timer("backend", "anchor", "10m", "back to the cursor migration")
    clock.advance(10)
    return room, clock
