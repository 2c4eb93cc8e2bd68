"""Usage in a room: record files read incrementally, priced by the price source, summed
per agent, model, link, handover, ask and day; budgets marked once per span. On SQLite,
and on PostgreSQL in the engine pass; two hosts each read their own agents' files."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

from agent_room.adapters.prices import Prices
from agent_room.core.usage import ROOM, STOP_AT, WARN_AT, Price, Tokens, span_start
from agent_room.room.budgets import Budgets
from agent_room.room.service import Room
from agent_room.room.usage import Usage
from agent_room.room.usage_report import Reports
from agent_room.room.views import audit_events
from agent_room.store import usage as store_usage
from agent_room.store.usage import ENDED_GRACE
from agent_room.turn.store.db import write_transaction
from agent_room.workers.memory import MemoryWorker
from tests.prices import listed_price
from tests.room.conftest import Clock, register

FIXTURES = Path(__file__).parent.parent / "fixtures"
EXCERPT = FIXTURES / "transcripts" / "spotter_excerpt_turn_end_compact.jsonl"
CODEX = FIXTURES / "codex-0.169.0" / "codex-tui-nodaemon-rollout-resumed.jsonl"
CLAUDE_2_1_330 = FIXTURES / "claude-code-2.1.330" / "transcript-interactive.jsonl"
GEMINI = FIXTURES / "gemini-cli-0.61.0" / "chats" / "gemini-tui-session-many-turns.jsonl"
T0 = 1_770_908_400.0
"""After the excerpt's last line (2026-02-12T15:00Z), the same day."""
FAR = 2_000_000_000.0
"""A span's end after every fixture's records."""


def _price(model: str, tokens: Tokens) -> float:
    return listed_price(model, tokens.input, tokens.output, tokens.cache_read, tokens.cache_write)


@pytest.fixture
def room(room_home: Path) -> Room:
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    clock = Clock()
    clock.now = T0
    opened.clock = clock
    return opened


def _agent(room: Room, tmp_path: Path, name: str, source: Path) -> Path:
    path = tmp_path / f"{name}.jsonl"
    shutil.copy(source, path)
    register(room, name, transcript_path=str(path))
    return path


def test_a_transcript_is_read_once_in_pieces_and_each_message_counted_once(
    room: Room, tmp_path: Path
) -> None:
    lines = EXCERPT.read_bytes().splitlines(keepends=True)
    path = tmp_path / "web.jsonl"
    path.write_bytes(b"".join(lines[:12]) + lines[12][:40])  # a line still being written
    register(room, "web", transcript_path=str(path))
    usage = Usage(room)
    usage.follow_live()
    with path.open("ab") as handle:
        handle.write(lines[12][40:] + b"".join(lines[13:]))
    usage.follow_live()
    assert usage.follow_live() == 0  # nothing new: one stat, no write
    (line,) = Reports(room).summary("agent", 0, FAR).lines
    assert line.key == "web"
    assert line.requests == 4  # four messages over nine lines
    expected = [
        ("claude-haiku-4-5-20251001", Tokens(3, 514, 138272, 348)),
        ("claude-haiku-4-5-20251001", Tokens(0, 356, 138620, 2749)),
        ("claude-haiku-4-5-20251001", Tokens(2, 1, 141369, 416)),
        ("claude-opus-4-6", Tokens(3, 9, 21448, 23812)),
    ]
    total = Tokens()
    for _, tokens in expected:
        total = total + tokens
    assert line.tokens == total
    assert line.cost_usd == pytest.approx(sum(_price(m, t) for m, t in expected))
    models = {m.key: m for m in Reports(room).summary("model", 0, FAR).lines}
    assert set(models) == {"claude-haiku-4-5-20251001", "claude-opus-4-6"}
    assert all(m.cost_known for m in models.values())
    (host,) = {r[0] for r in room.store.conn.execute("SELECT host FROM usage")}
    assert host == room.store.host


def test_an_unknown_model_shows_tokens_with_cost_unknown_until_a_price_is_set(
    room: Room, tmp_path: Path
) -> None:
    _agent(room, tmp_path, "cx", CODEX)
    _agent(room, tmp_path, "gem", GEMINI)
    usage = Usage(room)
    usage.follow_live()
    lines = {line.key: line for line in Reports(room).summary("agent", 0, FAR).lines}
    assert lines["cx"].tokens == Tokens(input=20, output=10)
    assert not lines["cx"].cost_known
    assert lines["cx"].as_dict()["cost_usd"] is None
    assert lines["gem"].requests == 30
    assert lines["gem"].cost_usd == pytest.approx(30 * _price("gemini-3.8-flash", Tokens(10, 5)))
    repriced = usage.set_price("stand-in-model", Price(input=2, output=8))
    assert repriced == 2
    cx = next(line for line in Reports(room).summary("agent", 0, FAR).lines if line.key == "cx")
    assert cx.cost_known
    assert cx.cost_usd == pytest.approx((20 * 2 + 10 * 8) / 1_000_000)
    assert usage.set_price("stand-in-model", None) == 0
    assert "stand-in-model" not in usage.overrides()


def test_each_host_reads_its_own_agents_records(
    room_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rooms = {}
    for host, name in (("laptop", "web"), ("devbox", "api")):
        monkeypatch.setenv("AGENT_ROOM_HOST", host)
        rooms[host] = Room.open({"AGENT_ROOM_HOME": str(room_home)})
        (tmp_path / host).mkdir()
        _agent(rooms[host], tmp_path / host, name, EXCERPT)
    Usage(rooms["laptop"]).follow_live()
    found = rooms["devbox"].store.conn.execute("SELECT DISTINCT name, host FROM usage").fetchall()
    assert [tuple(r) for r in found] == [("web", "laptop")]
    MemoryWorker(rooms["devbox"], probe=None, use_lease=False).run_once()  # type: ignore[arg-type]
    found = (
        rooms["laptop"]
        .store.conn.execute("SELECT name, host FROM usage GROUP BY name, host ORDER BY name")
        .fetchall()
    )
    assert [tuple(r) for r in found] == [("api", "devbox"), ("web", "laptop")]
    for opened in rooms.values():
        opened.close()


def test_a_links_usage_is_its_judged_turns_on_both_sides(room: Room, tmp_path: Path) -> None:
    web = _agent(room, tmp_path, "web", EXCERPT)
    api = _agent(room, tmp_path, "api", GEMINI)
    del web, api
    store = room.store
    web_turn = store.start_turn("s-web", prompt_id=None, kind="user", prompt="p", at=T0 - 3600)
    api_turn = store.start_turn("s-api", prompt_id=None, kind="user", prompt="p", at=T0)
    with write_transaction(store.conn) as conn:
        link = conn.execute(
            "INSERT INTO links (initiator, initiator_session, responder, responder_session,"
            " budget, opened_at, updated_at) VALUES ('web', 's-web', 'api', 's-api', 8, $1, $2)"
            " RETURNING id",
            (T0, T0),
        ).fetchone()[0]
        for session, turn in (("s-web", web_turn), ("s-api", api_turn)):
            conn.execute(
                "INSERT INTO link_turns (link_id, turn_id, last_turn, session_id, outcome, at)"
                " VALUES ($1, $2, $3, $4, 'crossed', $5)",
                (link, turn, turn, session, T0),
            )
    usage = Usage(room)
    usage.follow_live()
    (line,) = Reports(room).summary("link", 0, FAR).lines
    agents = {a.key: a for a in Reports(room).summary("agent", 0, FAR).lines}
    assert line.requests == agents["web"].requests + agents["api"].requests
    assert line.cost_usd == pytest.approx(agents["web"].cost_usd + agents["api"].cost_usd)
    detail = Reports(room).summary("link", 0, FAR).as_dict()["lines"][0]
    assert set(detail["sides"]) == {"web", "api"}
    assert detail["initiator"] == "web"


def test_an_asks_usage_keeps_the_clients_own_price(room: Room) -> None:
    result = json.loads((FIXTURES / "claude-code-2.1.197" / "print-output.json").read_text())
    usage = Usage(room)
    assert usage.record_ask(result, asker="web", label="backend", ask_id="7") == 1
    (line,) = Reports(room).summary("ask", 0, FAR).lines
    assert (line.key, line.tokens, line.cost_usd) == ("backend", Tokens(10, 5), 0.000175)


def test_a_budget_warns_once_at_80_and_holds_at_100_until_raised(
    room: Room, tmp_path: Path
) -> None:
    _agent(room, tmp_path, "web", EXCERPT)
    usage = Usage(room)
    usage.follow_live()
    spent = Reports(room).summary("agent", 0, FAR).lines[0].cost_usd
    room.clock.now = T0 + 3600  # type: ignore[attr-defined]
    Budgets(room).set("web", spent / 0.9)
    assert [b.scope for b, level, _ in Budgets(room).check()] == []  # marked by set_budget
    assert store_usage.marks(room.store, "web", span_start(room.clock())) == {WARN_AT}
    assert room.store.over_budget("web", room.clock()) is None
    Budgets(room).set("web", spent / 2)
    assert room.store.over_budget("web", room.clock()) == "web"
    assert Budgets(room).check() == []  # told once
    assert Reports(room).over() == {"web": "web"}
    Budgets(room).set("web", spent * 2)  # raised: the prompts go through again
    assert room.store.over_budget("web", room.clock()) is None
    Budgets(room).set(None, spent / 2)  # the room's budget holds everyone
    assert room.store.over_budget("api", room.clock()) == ROOM
    room.clock.now = T0 + 86400  # type: ignore[attr-defined]
    assert room.store.over_budget("web", room.clock()) is None  # a new day
    rows = {r["scope"]: r for r in Budgets(room).rows()}
    assert rows[ROOM]["spent_usd"] == 0
    events = [e for e in audit_events(room) if e.kind == "budget.reached"]
    assert [(e.subject, e.data["level"]) for e in events] == [
        ("web", WARN_AT),
        ("web", WARN_AT),
        ("web", STOP_AT),
        (ROOM, WARN_AT),
        (ROOM, STOP_AT),
    ]


def test_prices_come_from_the_package_and_the_override_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offline: the package's own data, no connection opened."""

    def no_network(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the price source went to the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    tokens = Tokens(1000, 100, 5000, 200)
    assert Prices().cost("claude-opus-4-6", tokens) == pytest.approx(
        _price("claude-opus-4-6", tokens)
    )
    assert Prices().cost("no-such-model-x", tokens) is None
    assert Prices({"claude-opus-4-6": Price(1, 1)}).cost("claude-opus-4-6", tokens) == (
        pytest.approx(6300 / 1_000_000)
    )


def test_a_backlog_is_read_a_chunk_at_a_time_within_each_passs_budget(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agent_room.room.usage.CHUNK", 4096)  # the excerpt: a few chunks
    for name in ("a", "b", "c"):
        _agent(room, tmp_path, name, EXCERPT)
    usage = Usage(room)
    assert usage.behind() == 3 * EXCERPT.stat().st_size
    passes = 0
    while passes < 100:
        passes += 1
        usage.follow_live(budget=0.0)  # a chunk, then the budget is spent
        found = [store_usage.cursor(room.store, str(tmp_path / f"{n}.jsonl")) for n in "abc"]
        if all(c is not None and c.offset == EXCERPT.stat().st_size for c in found):
            break
    assert 3 < passes < 100  # several passes, each file in turn
    assert usage.behind() == 0
    lines = {line.key: line for line in Reports(room).summary("agent", 0, FAR).lines}
    assert [lines[n].requests for n in "abc"] == [4, 4, 4]  # nothing skipped or doubled


def test_a_subagents_transcript_counts_for_its_parent_and_shows_apart(
    room: Room, tmp_path: Path
) -> None:
    _agent(room, tmp_path, "web", CLAUDE_2_1_330)
    sub = tmp_path / "agent-a1b2.jsonl"
    shutil.copy(EXCERPT, sub)
    room.store.record_subagent(
        {
            "agent_id": "a1b2",
            "session_id": "s-web",
            "agent_type": "Explore",
            "transcript_path": str(sub),
            "output": "found it",
        },
        at=room.clock(),
    )
    usage = Usage(room)
    usage.follow_live()
    assert usage.follow_live() == 0  # a finished subagent's file is read once
    (web,) = Reports(room).summary("agent", 0, FAR).lines
    (explore,) = Reports(room).summary("subagent", 0, FAR).lines
    assert explore.key == "web/a1b2"
    assert explore.requests == 4
    assert web.requests == explore.requests + 1  # the main transcript's one message


def test_a_session_that_ended_is_still_read_for_a_while(room: Room, tmp_path: Path) -> None:
    """Its last turn's usage may be written as the client exits."""
    path = _agent(room, tmp_path, "web", CLAUDE_2_1_330)
    usage = Usage(room)
    assert usage.follow_live() == 1
    room.store.mark_ended([("s-web", "exited")], at=room.clock())
    lines = EXCERPT.read_bytes().splitlines(keepends=True)
    with path.open("ab") as handle:
        handle.write(b"".join(lines[:6]))  # its last turn, written as it ended
    assert usage.follow_live() > 0
    room.clock.now += ENDED_GRACE + 1  # type: ignore[attr-defined]
    with path.open("ab") as handle:
        handle.write(b"".join(lines[6:]))
    assert usage.follow_live() == 0  # long ended: no longer read


def test_a_pass_reads_no_cursor_and_opens_no_file_that_did_not_move(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One query finds the record files with their cursors; a file that rests, or is
    still missing as its cursor says, costs a stat: no cursor read, no open. One that
    grew, or appeared, is read."""
    path = _agent(room, tmp_path, "web", EXCERPT)
    later = tmp_path / "later.jsonl"
    register(room, "api", transcript_path=str(later))
    usage = Usage(room)
    usage.follow_live()
    cursors: list[str] = []
    real_cursor = store_usage.cursor

    def cursor(store: object, path: str) -> object:
        cursors.append(path)
        return real_cursor(store, path)  # type: ignore[arg-type]

    monkeypatch.setattr(store_usage, "cursor", cursor)
    assert usage.follow_live() == 0
    assert cursors == []
    shutil.copy(CODEX, later)
    with path.open("ab") as handle:
        handle.write(b"\n")
    usage.follow_live()
    assert sorted(set(cursors)) == sorted({str(path), str(later)})
