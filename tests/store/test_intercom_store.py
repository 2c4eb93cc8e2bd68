"""The intercom's tables: one ask at a time per session, answers with their figures,
forgetting, importing; asks and answers in the history but in nobody's inbox."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from agent_room.room.service import Room
from agent_room.room.views import audit_events, message_views
from agent_room.store.intercom import IntercomStore
from agent_room.turn.store.schema import MIGRATIONS, SCHEMA_VERSION
from agent_room.turn.store.sqlite import SqliteStore


def _session(sid: str, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "session_id": sid,
        "repo": "/repos/api",
        "label": "api",
        "topic": "auth tokens",
        "created_at": 100.0,
        "last_used_at": 100.0,
        "parent": "p1",
        "asker": "web",
        "message_count": 1,
        "last_message": "auth tokens",
        "cost_usd": 0.01,
        "turns": 2,
        "status": "active",
    }
    return base | over


def test_the_table_is_a_migration_of_its_own(room: Room) -> None:
    assert len(MIGRATIONS) == SCHEMA_VERSION
    assert any("CREATE TABLE intercom_sessions" in m for m in MIGRATIONS)
    assert room.store.schema_version() == SCHEMA_VERSION


def test_a_session_is_claimed_by_one_ask_at_a_time(room: Room) -> None:
    store = IntercomStore(room.store)
    ask = store.record_ask(asker="web", label="api", question="q", at=100.0, data={})
    store.record_answer(_session("s1"), ask_id=ask, answer="a", at=101.0, data={})
    assert store.claim("s1", at=200.0, until=300.0)
    assert not store.claim("s1", at=250.0, until=350.0)
    assert store.claim("s1", at=301.0, until=400.0)  # a crashed ask's claim lapses
    store.release("s1")
    assert store.claim("s1", at=302.0, until=400.0)
    assert not store.claim("unknown", at=302.0, until=400.0)


def _claim(home: str, start: Any, results: Any) -> None:
    store = SqliteStore(home)
    start.wait()
    results.put(IntercomStore(store).claim("s1", at=200.0, until=900.0))
    store.close()


def test_processes_racing_for_a_session_let_one_win(room: Room, room_home: Path) -> None:
    store = IntercomStore(room.store)
    ask = store.record_ask(asker="web", label="api", question="q", at=100.0, data={})
    store.record_answer(_session("s1"), ask_id=ask, answer="a", at=101.0, data={})
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    results = context.Queue()
    workers = [
        context.Process(target=_claim, args=(str(room_home), start, results)) for _ in range(6)
    ]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(30)
    won = [results.get(timeout=5) for _ in workers]
    assert won.count(True) == 1


def test_an_answer_updates_the_session_and_marks_other_parents_inactive(room: Room) -> None:
    store = IntercomStore(room.store)
    ask = store.record_ask(asker="web", label="api", question="q", at=100.0, data={})
    store.record_answer(_session("old", parent="p0"), ask_id=ask, answer="a", at=100.0, data={})
    store.record_answer(_session("s1"), ask_id=ask, answer="a", at=101.0, data={})
    assert store.claim("s1", at=150.0, until=500.0)
    store.record_answer(
        _session("s1", message_count=2, cost_usd=0.03, turns=4, last_used_at=160.0),
        ask_id=ask,
        answer="b",
        at=160.0,
        data={},
    )
    rows = {r["session_id"]: r for r in store.sessions("/repos/api")}
    assert rows["s1"]["message_count"] == 2
    assert rows["s1"]["cost_usd"] == 0.03
    assert rows["s1"]["claimed_until"] is None  # the answer gives the session back
    assert rows["old"]["status"] == "inactive"
    assert rows["s1"]["status"] == "active"


def test_asks_and_answers_are_history_not_inbox(room: Room) -> None:
    room.join("api")
    room.join("web")
    store = IntercomStore(room.store)
    ask = store.record_ask(asker="web", label="api", question="how?", at=100.0, data={})
    store.record_answer(_session("s1"), ask_id=ask, answer="so.", at=101.0, data={})
    kinds = [(m["kind"], m["sender"], m["recipient"]) for m in room.history(10)]
    assert kinds == [("ask", "web", "api"), ("answer", "api", "web")]
    assert room.inbox("api", peek=True) == []
    assert room.inbox("web", peek=True) == []
    assert [m.kind for m in message_views(room, 10)] == ["ask", "answer"]
    events = [e.kind for e in audit_events(room)]
    assert "intercom.asked" in events
    assert "intercom.answered" in events


def test_forget_spares_a_session_in_use(room: Room) -> None:
    store = IntercomStore(room.store)
    ask = store.record_ask(asker="web", label="api", question="q", at=100.0, data={})
    for sid in ("a", "b"):
        store.record_answer(_session(sid), ask_id=ask, answer="x", at=100.0, data={})
    assert store.claim("a", at=100.0, until=500.0)
    assert store.forget(["a", "b"], at=200.0, by="operator", why="test") == ["b"]
    assert [r["session_id"] for r in store.sessions()] == ["a"]


def test_import_keeps_what_the_room_has(room: Room) -> None:
    store = IntercomStore(room.store)
    ask = store.record_ask(asker="web", label="api", question="q", at=100.0, data={})
    store.record_answer(_session("a", topic="mine"), ask_id=ask, answer="x", at=100.0, data={})
    added = store.import_sessions(
        [_session("a", topic="theirs"), _session("b")], at=200.0, by="operator"
    )
    assert added == 1
    assert store.session("a")["topic"] == "mine"  # type: ignore[index]
