"""The PreCompact hook: one small write; the memory worker takes the checkpoint, once."""

from __future__ import annotations

import shutil
from pathlib import Path

from agent_room.room.service import Room
from agent_room.store import checkpoints as store_checkpoints
from agent_room.workers.memory import MemoryWorker
from tests.hooks.conftest import Hook, new_session
from tests.ui.seed import AliveProbe

TRANSCRIPT = Path(__file__).parent.parent / "fixtures" / "transcripts" / "spotter_short.jsonl"
COMPACTED = (
    Path(__file__).parent.parent
    / "fixtures"
    / "transcripts"
    / "spotter_excerpt_turn_end_compact.jsonl"
)


def test_pre_compact_hook_has_the_worker_checkpoint_the_session_once(
    hook: Hook, room_home: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "api.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    start = new_session("SessionStart", transcript_path=str(transcript))
    assert hook("SessionStart", start, env={"AGENT_ROOM_NAME": "api"})[0] == 0
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    worker = MemoryWorker(room, AliveProbe(), use_lease=False)
    worker.run_once()  # the worker's first look: older compactions are history
    compact = {**start, "hook_event_name": "PreCompact", "trigger": "auto"}
    code, out, err = hook("PreCompact", compact)
    assert (code, out, err) == (0, None, "")
    worker.run_once()
    (checkpoint,) = store_checkpoints.listed(room.store, name="api")
    assert checkpoint["kind"] == "pre_compact"
    assert checkpoint["upto_seq"] > 0  # the transcript was read up to the compaction
    with transcript.open("ab") as out_file:  # then the compaction shows in the transcript
        out_file.write(COMPACTED.read_bytes())
    worker.run_once()
    worker.run_once()
    kinds = [c["kind"] for c in store_checkpoints.listed(room.store, name="api")]
    assert kinds == ["pre_compact"]
    room.close()
