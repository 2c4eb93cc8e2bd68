"""The healer in the deliverer's pass, over a real room (both engines): a busy session
whose client says it is idle is healed once the grace has passed, never over a hook
that wrote meanwhile, never from another session's registry entry; a transcript's end
heals a client without a registry; a name ``start`` takes over from an ended session is
a new placeholder with its pid."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agent_room.adapters import inotify
from agent_room.adapters.claude_native import FileRegistry
from agent_room.core.heal import GRACE, IDLE_RECHECK, RECHECK, REGISTRY_GRACE, STALE_AFTER
from agent_room.core.native import NativeSession
from agent_room.room.service import Room, connect_long_lived
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.workers.healer import Healer
from tests.ui.seed import LIVE_PID, AliveProbe, FrozenClock

SESSION = "sess-worker"


class Entries:
    """The client's registry as the test sets it."""

    sessions_dir: Path | None = None

    def __init__(self) -> None:
        self.found: NativeSession | None = None

    def sessions(self) -> list[NativeSession]:
        return [self.found] if self.found else []

    def entry(self, pid: int) -> NativeSession | None:
        return self.found if self.found and self.found.pid == pid else None

    def socket_facts(self, path: str) -> None:
        return None

    def peer_token(self, pid: int, path: str) -> None:
        return None


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def room(room_home: Path, clock: FrozenClock, tmp_path: Path) -> Iterator[Room]:
    opened = Room(SqliteStore(str(room_home), open_postgres=connect_long_lived), clock=clock)
    Registry(opened, AliveProbe()).register(
        SessionFacts(
            session_id=SESSION,
            cwd="/srv/app",
            transcript_path=str(tmp_path / "worker.jsonl"),
            pid=LIVE_PID,
            pid_start=100,
            pane="%1",
            name="worker",
        )
    )
    opened.store.set_state(SESSION, "busy", at=clock.now)
    yield opened
    opened.close()


def _state(room: Room) -> str:
    row = room.store.session(SESSION)
    assert row is not None
    return str(row["state"])


def _idle_entry(since: float) -> NativeSession:
    return NativeSession(
        pid=LIVE_PID,
        session_id=SESSION,
        cwd="/srv/app",
        kind="interactive",
        status="idle",
        status_at=since,
        proc_start=100,
    )


def test_the_registrys_idle_heals_a_lost_stop_after_its_grace(
    room: Room, clock: FrozenClock
) -> None:
    entries = Entries()
    healer = Healer(room, entries)
    clock.advance(STALE_AFTER)
    entries.found = _idle_entry(clock.now - REGISTRY_GRACE / 2)  # its Stop was lost
    assert healer.run(clock.now) == []  # its idle is younger than the grace
    clock.advance(REGISTRY_GRACE)
    assert healer.run(clock.now) == ["worker"]
    assert _state(room) == "idle"
    (event,) = [
        e
        for e in room.store.events()
        if e["kind"] == "session.state" and "healed" in (e["data"] or {})
    ]
    assert "the client's registry says idle" in event["data"]["healed"]


def test_another_sessions_entry_for_the_pid_is_not_believed(room: Room, clock: FrozenClock) -> None:
    entries = Entries()
    entries.found = replace(_idle_entry(clock.now), session_id="after-a-clear")
    clock.advance(STALE_AFTER + GRACE)
    assert Healer(room, entries).run(clock.now) == []
    assert _state(room) == "busy"


def test_a_hook_that_wrote_meanwhile_wins(room: Room, clock: FrozenClock) -> None:
    row = room.store.session(SESSION)
    assert row is not None
    room.store.set_state(SESSION, "waiting", at=clock.now + 1)  # a hook, after the read
    assert not room.store.settle_state(
        "worker", "idle", was="busy", since=float(row["updated_at"]), reason="x", at=clock.now + 2
    )
    assert _state(room) == "waiting"


def test_a_transcripts_end_heals_a_client_without_a_registry(
    room: Room, clock: FrozenClock, tmp_path: Path
) -> None:
    transcript = tmp_path / "worker.jsonl"
    transcript.write_text(
        '{"type": "event_msg", "payload": {"type": "task_started"}}\n'
        '{"type": "event_msg", "payload": {"type": "task_complete"}}\n'
    )
    healer = Healer(room)
    clock.now = transcript.stat().st_mtime + GRACE - 1
    assert healer.run(clock.now) == []
    clock.now = transcript.stat().st_mtime + GRACE + STALE_AFTER
    assert healer.run(clock.now) == ["worker"]
    assert _state(room) == "idle"


def test_a_turn_going_on_in_the_transcript_is_left_busy(
    room: Room, clock: FrozenClock, tmp_path: Path
) -> None:
    (tmp_path / "worker.jsonl").write_text('{"type": "user", "message": {"content": "go"}}\n')
    clock.advance(3600)
    assert Healer(room).run(clock.now) == []
    assert _state(room) == "busy"


def test_start_takes_an_ended_name_over_with_a_new_placeholder(
    room: Room, clock: FrozenClock
) -> None:
    room.store.set_state(SESSION, "ended", at=clock.advance(1))
    row = room.join("worker", pane="%7", agent="codex", pid=4242, pid_start=7)
    assert row["session_id"] is None
    assert (row["state"], row["pid"], row["pane"]) == ("idle", 4242, "%7")
    old = room.store.session(SESSION)
    assert old is not None
    assert old["left_at"] is not None  # in the history, under its id
    assert any(e["kind"] == "session.superseded" for e in room.store.events())


class CountedRegistry(FileRegistry):
    """The client's real registry folder, its entries read counted."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, AliveProbe(), owner=lambda _pid: os.getuid())
        self.reads = 0

    def entry(self, pid: int) -> NativeSession | None:
        self.reads += 1
        return super().entry(pid)


def _write_entry(folder: Path, status: str, at: float) -> None:
    entry = {
        "pid": LIVE_PID,
        "sessionId": SESSION,
        "cwd": "/srv/app",
        "status": status,
        "statusUpdatedAt": at * 1000,
        "procStart": 100,
    }
    (folder / f"{LIVE_PID}.json").write_text(json.dumps(entry))


@pytest.mark.skipif(not inotify.available(), reason="file events are Linux's inotify")
def test_an_idle_session_is_looked_at_when_its_registry_file_changes(
    room: Room, clock: FrozenClock, tmp_path: Path
) -> None:
    room.store.set_state(SESSION, "idle", at=clock.now)
    registry = CountedRegistry(tmp_path / "claude")
    healer = Healer(room, registry)
    assert healer.run(clock.now) == []  # the first look
    assert registry.reads == 1
    assert healer.absent
    for _ in range(3):  # no registry folder: no entry to read
        clock.advance(RECHECK)
        healer.run(clock.now)
    assert registry.reads == 1
    folder = tmp_path / "claude" / "sessions"
    folder.mkdir(parents=True)
    _write_entry(folder, "idle", clock.now)
    clock.advance(RECHECK)
    healer.run(clock.now)  # the folder is watched from now on: everyone looked at once
    assert healer.events is not None
    assert registry.reads == 2
    for _ in range(5):  # at rest: idle, nothing written, nothing read
        clock.advance(RECHECK)
        assert healer.run(clock.now) == []
    assert registry.reads == 2
    assert not healer.closely
    _write_entry(folder, "waiting", clock.now)  # a dialog the room's hooks did not hear of
    clock.advance(RECHECK)
    assert healer.run(clock.now) == ["worker"]  # its file changed: looked at, healed
    assert registry.reads == 3
    assert _state(room) == "waiting"
    healer.close()


@pytest.mark.skipif(not inotify.available(), reason="file events are Linux's inotify")
def test_a_quiet_idle_session_is_still_looked_at_now_and_then(
    room: Room, clock: FrozenClock, tmp_path: Path
) -> None:
    room.store.set_state(SESSION, "idle", at=clock.now)
    folder = tmp_path / "claude" / "sessions"
    folder.mkdir(parents=True)
    registry = CountedRegistry(tmp_path / "claude")
    healer = Healer(room, registry)
    healer.run(clock.now)
    assert registry.reads == 1
    clock.advance(IDLE_RECHECK - RECHECK)
    healer.run(clock.now)
    assert registry.reads == 1
    clock.advance(RECHECK)  # an event the kernel dropped is caught by this look
    healer.run(clock.now)
    assert registry.reads == 2
    healer.close()


def test_without_file_events_an_idle_session_is_looked_at_every_second(
    room: Room, clock: FrozenClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inotify, "available", lambda: False)
    room.store.set_state(SESSION, "idle", at=clock.now)
    (tmp_path / "claude" / "sessions").mkdir(parents=True)
    registry = CountedRegistry(tmp_path / "claude")
    healer = Healer(room, registry)
    for _ in range(3):
        healer.run(clock.now)
        clock.advance(RECHECK)
    assert registry.reads == 3
    assert healer.closely
