"""Checkpoints over a real room and a real transcript: by hand, before a compaction, at a
session's end; full, partial and agent resumes; retention; bad references."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_room.room.checkpoints import Checkpoints, queue_resume
from agent_room.room.memory import Memory
from agent_room.room.service import Room
from agent_room.store import checkpoints as store_checkpoints
from agent_room.turn.core.errors import BadInput, NotFound, Refused
from agent_room.workers.memory import MemoryWorker
from tests.room.conftest import Clock, register
from tests.ui.seed import AliveProbe

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


@pytest.fixture
def room(room_home: Path, tmp_path: Path, clock: Clock) -> Room:
    path = tmp_path / "api.jsonl"
    shutil.copy(TRANSCRIPTS / "spotter_excerpt_turn_end_compact.jsonl", path)
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    opened.clock = clock
    register(opened, "api", transcript_path=str(path), cwd=str(tmp_path))
    register(opened, "web")
    register(opened, "ops")
    return opened


def test_a_compaction_in_the_transcript_takes_a_checkpoint_of_what_came_before(room: Room) -> None:
    session = room.store.holder("api")
    assert session is not None
    Memory(room).follow("s-api", session["transcript_path"])
    (before,) = store_checkpoints.listed(room.store, name="api")
    assert before["kind"] == "pre_compact"
    text = Checkpoints(room).context(f"#{before['id']}")
    assert "bd close spotter-4te.3" in text  # done before the compaction
    assert "git status --short" not in text  # run after it
    assert "continue implementation" not in text


def test_manual_checkpoint_and_the_three_modes(room: Room) -> None:
    room.send("api", "web", "the trace header is traceparent")
    room.send("ops", "api", "deploy after lunch")
    checkpoints = Checkpoints(room)
    taken = checkpoints.take_named("api", note="before the release")
    assert checkpoints.find("api")["id"] == taken
    full = checkpoints.context("api", mode="full")
    assert "Note: before the release" in full
    assert "- ran: git status --short" in full
    assert "- message to @web: the trace header is traceparent" in full
    assert "- message from @ops: deploy after lunch" in full
    assert "Entities it named:" in full
    assert "- file lib/spotter_web/controllers/hooks_controller.ex" in full
    partial = checkpoints.context(f"#{taken}", mode="partial")
    assert partial.count("\n- ") <= 50
    web = checkpoints.context(str(taken), mode="agent", agent="web")
    assert "traceparent" in web
    assert "deploy after lunch" not in web
    assert "git status" not in web


def test_session_end_is_checkpointed_once_by_the_worker(room: Room) -> None:
    worker = MemoryWorker(room, AliveProbe(), use_lease=False)
    worker.run_once()
    room.store.set_state("s-api", "ended", at=room.clock())
    worker.run_once()
    worker.run_once()
    kinds = [c["kind"] for c in store_checkpoints.listed(room.store, name="api")]
    assert kinds.count("session_end") == 1


def test_retention_keeps_the_newest(room: Room) -> None:
    checkpoints = Checkpoints(room)
    checkpoints.set_retention(keep=3, days=None)
    ids = [checkpoints.take_named("api") for _ in range(5)]
    assert [c["id"] for c in checkpoints.listed("api")] == ids[::-1][:3]
    assert checkpoints.retention() == (3, 30.0)


def test_bad_references(room: Room) -> None:
    checkpoints = Checkpoints(room)
    with pytest.raises(NotFound, match="no checkpoint #99"):
        checkpoints.context("#99")
    with pytest.raises(NotFound, match="no checkpoint of @web"):
        checkpoints.context("web")
    checkpoints.take_named("api")
    with pytest.raises(BadInput, match="invalid mode"):
        checkpoints.context("api", mode="everything")
    with pytest.raises(BadInput, match="needs --agent"):
        checkpoints.context("api", mode="agent")
    with pytest.raises(Refused, match="@web is running"):
        queue_resume(room, "web", "context")
