"""Following transcripts by byte offset, and the context a handover carries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_room.adapters import follow
from agent_room.core.handover import HandoverFields
from agent_room.room.memory import PROBLEM, Memory
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.store import memory as store_memory
from agent_room.workers.memory import MemoryWorker
from tests.room.conftest import register
from tests.ui.seed import AliveProbe

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
EXCERPT = "spotter_excerpt_turn_end_compact.jsonl"


def _problems(room: Room) -> list[str]:
    return [e.data["problem"] for e in audit_events(room) if e.kind == PROBLEM]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPTS / EXCERPT, path)
    return path


def _room_with_sender(room_home: Path, transcript: Path) -> Room:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    register(room, "api", transcript_path=str(transcript))
    register(room, "web")
    return room


def test_follows_by_byte_offset(room_home: Path, transcript: Path) -> None:
    room = _room_with_sender(room_home, transcript)
    memory = Memory(room)
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:20]) + lines[20][:30])  # the client mid-write
    first = memory.follow("s-api", str(transcript))
    cursor = store_memory.cursor(room.store, "s-api")
    assert cursor is not None
    assert cursor["offset"] == sum(len(line) for line in lines[:20])
    assert memory.follow("s-api", str(transcript)) == 0  # nothing whole was added
    transcript.write_bytes(b"".join(lines))
    rest = memory.follow("s-api", str(transcript))
    assert first > 0
    assert rest > 0
    writes: list[str] = []
    room.store.conn.set_trace_callback(writes.append)
    again = Memory(room).follow("s-api", str(transcript))
    room.store.conn.set_trace_callback(None)
    assert again == 0
    assert not [w for w in writes if w.lstrip().upper().startswith(("INSERT", "UPDATE", "BEGIN"))]
    texts = [r["text"] for r in store_memory.items(room.store, "s-api")]
    assert texts.count("git status --short") == 1
    assert _problems(room) == []


def test_bad_transcripts_are_logged_once_and_nothing_else_moves(
    room_home: Path, transcript: Path, tmp_path: Path
) -> None:
    room = _room_with_sender(room_home, transcript)
    memory = Memory(room)
    missing = str(tmp_path / "gone.jsonl")
    assert memory.follow("s-x", missing) == 0
    assert memory.follow("s-x", missing) == 0
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_bytes(b"\x00\x01binary\nnot json at all\n")
    assert memory.follow("s-y", str(foreign)) == 0
    assert memory.follow("s-api", str(transcript)) > 0
    transcript.write_bytes(b"")  # truncated: read again from the start when it grows
    memory.follow("s-api", str(transcript))
    problems = _problems(room)
    assert len(problems) == 3, problems
    assert "cannot read" in problems[0]
    assert "not a Claude Code transcript" in problems[1]
    assert "shrank or was replaced" in problems[2]


def test_a_transcript_written_after_a_failed_read_clears_the_problem(
    room_home: Path, transcript: Path, tmp_path: Path
) -> None:
    """Claude Code writes its transcript only after the first prompt: a context prepared
    once it exists does not carry the earlier "cannot read"."""
    later = tmp_path / "later.jsonl"
    room = _room_with_sender(room_home, later)
    memory = Memory(room)
    assert memory.follow("s-api", str(later)) == 0
    shutil.copy(transcript, later)
    assert memory.follow("s-api", str(later)) > 0
    cursor = store_memory.cursor(room.store, "s-api")
    assert cursor is not None
    assert cursor["problem"] is None
    handover = room.send_handover("api", "web", body="please check the trace headers")
    memory.prepare(handover)
    prepared = store_memory.context(room.store, handover)
    assert prepared is not None
    assert prepared["problem"] is None
    assert prepared["items"] > 0
    assert "cannot read" in _problems(room)[0]  # the room was told once, and it stays told


def test_a_huge_backlog_is_read_from_its_newest_part(
    room_home: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = _room_with_sender(room_home, transcript)
    monkeypatch.setattr(follow, "BACKLOG", 20_000)
    size = transcript.stat().st_size
    added = Memory(room).follow("s-api", str(transcript))
    cursor = store_memory.cursor(room.store, "s-api")
    assert cursor is not None
    assert cursor["offset"] == size
    assert added > 0
    assert "too many to read" in _problems(room)[0]


def test_the_handover_carries_its_context(room_home: Path, transcript: Path) -> None:
    room = _room_with_sender(room_home, transcript)
    fields = HandoverFields(
        what_changed="hook controllers traced",
        what_to_do="check the hooks_controller trace headers",
        contract="traceparent header",
    )
    handover = room.send_handover("api", "web", fields=fields)
    worker = MemoryWorker(room, AliveProbe())
    assert worker.run_once()
    prepared = store_memory.context(room.store, handover)
    assert prepared is not None
    assert prepared["tokens"] <= 5000
    assert "lib/spotter_web/controllers/hooks_controller.ex" in prepared["text"]
    assert "git status --short" in prepared["text"]
    room.approve(handover)
    body = room.store.message(handover)
    assert body is not None
    assert body["body"].startswith("## Handover from api")
    assert "## Context from @api's session" in body["body"]
    assert "hooks_controller.ex" in body["body"]
    worker.release()


def test_approving_before_the_worker_prepares_it_there(room_home: Path, transcript: Path) -> None:
    room = _room_with_sender(room_home, transcript)
    handover = room.send_handover("api", "web", body="please check the trace headers")
    room.approve(handover)
    body = room.store.message(handover)
    assert body is not None
    assert "## Context from @api's session" in body["body"]


def test_no_transcript_no_context_and_the_approval_stands(room_home: Path, tmp_path: Path) -> None:
    room = _room_with_sender(room_home, tmp_path / "never-written.jsonl")
    handover = room.send_handover("api", "web", body="please take the billing work")
    room.approve(handover)
    body = room.store.message(handover)
    assert body is not None
    assert body["body"] == "please take the billing work"
    assert body["status"] == "queued"
    prepared = store_memory.context(room.store, handover)
    assert prepared is not None
    assert "cannot read" in prepared["problem"]
    assert any("cannot read" in p for p in _problems(room))


def test_old_memory_is_forgotten_unless_a_checkpoint_needs_it(
    room_home: Path, transcript: Path, tmp_path: Path, clock: object
) -> None:
    room = _room_with_sender(room_home, transcript)
    room.clock = clock  # type: ignore[assignment]
    short = tmp_path / "ops.jsonl"
    shutil.copy(TRANSCRIPTS / "spotter_short.jsonl", short)
    register(room, "ops", transcript_path=str(short))
    memory = Memory(room)
    memory.follow("s-api", str(transcript))  # its compaction took a checkpoint
    memory.follow("s-ops", str(short))
    clock.now += 29 * 86400  # type: ignore[attr-defined]
    assert memory.prune() == []
    clock.now += 2 * 86400  # type: ignore[attr-defined]
    assert memory.prune() == ["s-ops"]
    assert store_memory.items(room.store, "s-ops") == []
    assert store_memory.items(room.store, "s-api") != []


def test_the_context_stops_at_the_request(room_home: Path, tmp_path: Path) -> None:
    import json
    import time
    from datetime import UTC, datetime

    def said(text: str, at: float) -> str:
        stamp = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        content = [{"type": "text", "text": text}]
        return json.dumps(
            {"type": "assistant", "timestamp": stamp, "message": {"content": content}}
        )

    transcript = tmp_path / "api.jsonl"
    now = time.time()
    transcript.write_text(said("the billing fix is in", now - 60) + "\n")
    room = _room_with_sender(room_home, transcript)
    handover = room.send_handover("api", "web", body="take the billing work")
    with transcript.open("a") as out:  # what the sender did after asking
        out.write(said("now handing the secret rewrite to @ops", now + 60) + "\n")
    room.approve(handover)  # prepared only now, from the whole transcript
    body = room.store.message(handover)
    assert body is not None
    assert "the billing fix is in" in body["body"]
    assert "secret rewrite" not in body["body"]


def test_a_pass_opens_only_the_transcripts_that_moved(
    room_home: Path, transcript: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One query finds every live transcript with its cursor; a file one ``stat`` shows
    where its cursor stands is neither opened nor its cursor read again; one that grew,
    or was replaced, is read."""
    room = _room_with_sender(room_home, transcript)
    other = tmp_path / "web.jsonl"
    shutil.copy(TRANSCRIPTS / EXCERPT, other)
    register(room, "web", transcript_path=str(other))
    memory = Memory(room)
    assert memory.follow_live() > 0
    opened: list[str] = []
    cursors: list[str] = []
    real_read, real_cursor = follow.read_from, store_memory.cursor

    def read_from(path: str, *args: object, **options: object) -> follow.Chunk:
        opened.append(path)
        return real_read(path, *args, **options)  # type: ignore[arg-type]

    def cursor(store: object, session_id: str) -> object:
        cursors.append(session_id)
        return real_cursor(store, session_id)  # type: ignore[arg-type]

    monkeypatch.setattr("agent_room.room.memory.read_from", read_from)
    monkeypatch.setattr(store_memory, "cursor", cursor)
    assert memory.follow_live() == 0
    assert (opened, cursors) == ([], [])
    lines = (TRANSCRIPTS / EXCERPT).read_bytes().splitlines(keepends=True)
    with other.open("ab") as handle:
        handle.write(lines[-1])  # the web agent's turn went on
    assert memory.follow_live() > 0
    assert opened == [str(other)]
    replaced = tmp_path / "replaced.jsonl"
    shutil.copy(TRANSCRIPTS / EXCERPT, replaced)
    replaced.replace(transcript)  # the same size, another file
    opened.clear()
    memory.follow_live()
    assert opened == [str(transcript)]


def test_a_missing_transcript_is_told_once_and_then_costs_a_stat(
    room_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session whose transcript is not written yet (or is gone): the first pass tells
    the problem once; the next passes neither open it nor read its cursor; once the file
    is there, it is read and the problem forgotten."""
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    later = tmp_path / "later.jsonl"
    register(room, "api", transcript_path=str(later))
    memory = Memory(room)
    assert memory.follow_live() == 0
    assert _problems(room) == [follow.unreadable(str(later), "No such file or directory")]
    opened: list[str] = []
    real_read = follow.read_from

    def read_from(path: str, *args: object, **options: object) -> follow.Chunk:
        opened.append(path)
        return real_read(path, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr("agent_room.room.memory.read_from", read_from)
    assert memory.follow_live() == 0
    assert opened == []
    shutil.copy(TRANSCRIPTS / EXCERPT, later)
    assert memory.follow_live() > 0
    assert opened == [str(later)]
    cursor = store_memory.cursor(room.store, "s-api")
    assert cursor is not None
    assert cursor["problem"] is None
    assert len(_problems(room)) == 1
