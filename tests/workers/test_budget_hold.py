"""A spent budget: the notifier tells 80 % and 100 % once each, the room stops sending the
agent its own prompts (typed nudges, Stop-hook deliveries: room messages, crossings and
timers all arrive that way) and says so, until the operator raises the budget."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.core.usage import ROOM, Record, Tokens
from agent_room.core.usage_records import Client
from agent_room.room.budgets import Budgets
from agent_room.room.service import Room, connect_long_lived
from agent_room.store import usage as store_usage
from agent_room.store.usage import Priced
from agent_room.turn.room.delivery import deliver_at_stop
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.notifier import Notifier
from tests.ui.seed import AliveProbe
from tests.workers.test_deliverer_retries import Clock, ScriptedMux
from tests.workers.test_notifier import Recording


@pytest.fixture
def room(room_home: Path) -> Iterator[Room]:
    clock = Clock()
    clock.now = 1_795_000_000.0  # 2026-11-18, early in the UTC day
    opened = Room(SqliteStore(str(room_home), open_postgres=connect_long_lived), clock=clock)
    opened.join("backend")
    opened.join("frontend", pane="%1")
    yield opened
    opened.close()


def _spend(room: Room, name: str, dollars: float, key: str) -> None:
    record = Record(key, Client.CLAUDE, "some-model", Tokens(input=1000), room.clock())
    store_usage.save(room.store, f"s-{name}", [Priced(record, name, dollars)], at=room.clock())


def test_a_spent_budget_holds_the_agents_prompts_until_raised_and_is_told_once(
    room: Room,
) -> None:
    channel = Recording()
    notifier = Notifier(room, AliveProbe(), [channel], use_lease=False)
    mux = ScriptedMux()
    deliverer = Deliverer(room, mux, AliveProbe())
    Budgets(room).set("frontend", 1.0)

    _spend(room, "frontend", 0.85, "m1")
    assert [(b.scope, level) for b, level, _ in Budgets(room).check()] == [("frontend", 80)]
    notifier.run_once()
    assert [a.kind for a in channel.alerts] == ["budget"]
    assert "@frontend has spent 80 % of its budget ($0.85 of $1.00" in channel.alerts[0].text
    _spend(room, "frontend", 0.2, "m2")
    Budgets(room).check()
    assert Budgets(room).check() == []  # each level once
    notifier.run_once()
    notifier.run_once()
    assert [a.text.split(" (")[0] for a in channel.alerts][1:] == ["@frontend spent its budget"]
    assert "agent-room budget set frontend AMOUNT" in channel.alerts[1].text

    mid = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert mux.calls == []  # no nudge typed
    note = room.store.notes()["frontend"]
    assert (
        note
        == "@frontend is over its budget: the room holds its prompts until the operator raises it"
    )
    session = room.store.holder("frontend")
    assert session is not None
    assert deliver_at_stop(room, session) is None  # nor handed over at its Stop
    assert room.store.message(mid)["status"] == "queued"  # type: ignore[index]

    Budgets(room).set("frontend", 5.0)  # the operator raises it
    deliverer.run_once()
    assert [c[0] for c in mux.calls] == ["type_line"]
    assert room.store.notes().get("frontend", "") == ""
    deliverer.release()


def test_the_rooms_budget_holds_everyone(room: Room) -> None:
    Budgets(room).set(None, 0.5)
    _spend(room, "backend", 0.6, "m1")
    Budgets(room).check()
    assert room.store.over_budget("frontend", room.clock()) == ROOM
    mux = ScriptedMux()
    deliverer = Deliverer(room, mux, AliveProbe())
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert mux.calls == []
    assert "over the room's budget" in room.store.notes()["frontend"]
    Budgets(room).clear(None)
    deliverer.run_once()
    assert [c[0] for c in mux.calls] == ["type_line"]
    deliverer.release()
