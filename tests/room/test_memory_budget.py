"""The handover context's budget is a room setting: a change reaches the memory worker
that is already running, at its next handover."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent_room.core.handover import HandoverFields
from agent_room.core.memory import DEFAULT_BUDGET
from agent_room.room.memory_settings import change_settings, settings
from agent_room.room.service import Room
from agent_room.store import memory as store_memory
from agent_room.turn.core.errors import BadInput
from agent_room.workers.memory import MemoryWorker
from tests.room.conftest import register
from tests.ui.seed import AliveProbe

TRANSCRIPT = Path(__file__).parent.parent / "fixtures" / "transcripts"
FIELDS = HandoverFields(
    what_changed="hook controllers traced", what_to_do="check the trace headers"
)


def test_a_smaller_budget_gives_a_shorter_context(room_home: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPT / "spotter_excerpt_turn_end_compact.jsonl", transcript)
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    register(room, "api", transcript_path=str(transcript))
    register(room, "web")
    worker = MemoryWorker(room, AliveProbe())
    assert settings(room) == {"budget": DEFAULT_BUDGET}
    first = room.send_handover("api", "web", fields=FIELDS)
    assert worker.run_once()
    change_settings(room, budget=400)
    second = room.send_handover("api", "web", fields=FIELDS)
    assert worker.run_once()  # the same worker: the setting is read for each context
    wide = store_memory.context(room.store, first)
    narrow = store_memory.context(room.store, second)
    assert wide is not None
    assert narrow is not None
    assert narrow["tokens"] <= 400 < wide["tokens"], (narrow["tokens"], wide["tokens"])
    assert len(narrow["text"]) < len(wide["text"])
    assert "within 400 tokens" in narrow["text"]
    worker.release()


@pytest.mark.parametrize("budget", [0, 99, 1_000_001])
def test_a_budget_out_of_range_is_refused_and_nothing_changes(room_home: Path, budget: int) -> None:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    change_settings(room, budget=8000)
    with pytest.raises(BadInput, match="budget"):
        change_settings(room, budget=budget)
    assert settings(room) == {"budget": 8000}
