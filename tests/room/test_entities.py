"""The shared entity registry over a real room, and the warning of a file two agents change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_room.core.entities import Mention
from agent_room.core.handover import HandoverFields
from agent_room.room.entities import Entities
from agent_room.room.memory import Memory
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.turn.core.errors import BadInput, NotFound
from agent_room.workers.memory import MemoryWorker
from tests.room.conftest import register
from tests.ui.seed import AliveProbe

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"


def test_typescript_from_two_agents_is_one_entity_version_2(linked: Room) -> None:
    entities = Entities(linked)
    first = entities.mention(
        Mention("tool", "TypeScript", "Used for type safety"), agent="a", source="test"
    )
    second = entities.mention(
        Mention("tool", "TypeScript", "Compile target ES2020"), agent="b", source="test"
    )
    assert first == second
    (entity,) = entities.search("typescript")
    assert entity["version"] == 2
    assert entity["merge_count"] == 1
    assert entity["context"] == "Used for type safety. Compile target ES2020"
    assert [m["agent"] for m in entities.mentions(first)] == ["b", "a"]


def test_near_duplicates_per_type_and_the_threshold(linked: Room) -> None:
    entities = Entities(linked)
    one = entities.mention(Mention("file", "src/api/tasks.py"), agent="a", source="t")
    assert entities.mention(Mention("file", "./src/api/task.py"), agent="b", source="t") == one
    other = entities.mention(Mention("module", "src/api/tasks.py"), agent="b", source="t")
    assert other != one  # another type is another entity
    entities.configure(strategy=None, threshold=1.0)
    strict = Entities(linked)
    assert strict.mention(Mention("file", "src/api/taskz.py"), agent="c", source="t") != one
    with pytest.raises(BadInput, match="invalid threshold"):
        strict.configure(strategy=None, threshold=1.5)


def test_manual_strategy_leaves_a_conflict_for_the_operator(linked: Room) -> None:
    entities = Entities(linked, strategy="manual")
    entity = entities.mention(Mention("service", "billing", "charges cards"), agent="a", source="t")
    entities.mention(Mention("service", "billing", "sends invoices"), agent="b", source="t")
    (conflict,) = entities.conflicts()
    assert conflict["context"] == "sends invoices"
    entities.resolve(int(conflict["id"]), take=True)
    assert entities.find(f"#{entity}")["context"] == "sends invoices"
    assert entities.conflicts() == []
    with pytest.raises(NotFound):
        entities.resolve(int(conflict["id"]), take=False)


def test_merge_two_entities_by_hand(linked: Room) -> None:
    entities = Entities(linked, threshold=0.99)
    a = entities.mention(Mention("endpoint", "GET /tasks", "lists tasks"), agent="a", source="t")
    b = entities.mention(Mention("endpoint", "GET /todos", "old name"), agent="b", source="t")
    merged = entities.merge(f"#{a}", "GET /todos")
    assert merged["context"] == "lists tasks. old name"
    assert merged["version"] == 2
    assert {m["agent"] for m in entities.mentions(a)} == {"a", "b"}
    with pytest.raises(NotFound):
        entities.find(f"#{b}")
    c = entities.mention(Mention("tool", "Redis"), agent="a", source="t")
    with pytest.raises(BadInput, match="only entities of one type"):
        entities.merge(f"#{a}", f"#{c}")


def test_the_worker_fills_the_registry_from_handovers_messages_and_transcripts(
    room_home: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "api.jsonl"
    shutil.copy(TRANSCRIPTS / "spotter_excerpt_turn_end_compact.jsonl", transcript)
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    register(room, "api", transcript_path=str(transcript), cwd="/p/spotter")
    register(room, "web")
    fields = HandoverFields(
        what_changed="GET /traces added", what_to_do="show them", files="lib/traces.ex"
    )
    room.send_handover("api", "web", fields=fields)
    room.send("web", "api", "does POST /traces need auth?\nwe use TypeScript")
    room.send_handover("web", "api", body="please own the DELETE /traces endpoint")
    MemoryWorker(room, AliveProbe(), use_lease=False).run_once()
    found = {(r["type"], r["name"]) for r in Entities(room).search()}
    assert ("endpoint", "GET /traces") in found  # a handover
    assert ("endpoint", "POST /traces") in found  # a message
    assert ("endpoint", "DELETE /traces") in found  # a handover without the template
    for row in Entities(room).search():
        assert "\n" not in row["context"]
        assert "## Handover" not in row["context"]  # a handover counts by its fields
    assert ("tool", "TypeScript") in found
    assert ("file", "lib/spotter_web/controllers/hooks_controller.ex") in found  # a transcript
    assert ("tool", "git") in found
    assert "settings.changed" not in [e.kind for e in audit_events(room)]  # bookkeeping is quiet


def test_two_live_agents_changing_one_file_are_both_warned_once(
    room_home: Path, tmp_path: Path
) -> None:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    lines = []
    for name in ("api", "web"):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("")
        lines.append(path)
        register(room, name, transcript_path=str(path), cwd="/p/shop")
    edit = {
        "type": "assistant",
        "message": {
            "content": [
                {
                    "type": "tool_use",
                    "id": "1",
                    "name": "Edit",
                    "input": {"file_path": "/p/shop/src/cart.ts"},
                }
            ]
        },
    }
    memory = Memory(room)
    for path, session in zip(lines, ("s-api", "s-web"), strict=True):
        path.write_text(json.dumps(edit) + "\n")
        memory.follow(session, str(path))
    warned = [m for m in room.history(50) if m["sender"] == "room"]
    assert sorted(m["recipient"] for m in warned) == ["api", "web"]
    assert "@web also changed /p/shop/src/cart.ts" in next(
        m["body"] for m in warned if m["recipient"] == "api"
    )
    with lines[0].open("a") as handle:  # the same clash again within the window: no more
        handle.write(json.dumps(edit) + "\n")
    memory.follow("s-api", str(lines[0]))
    assert len([m for m in room.history(50) if m["sender"] == "room"]) == 2
    assert [e.kind for e in audit_events(room)].count("file.clash") == 1
    from agent_room.room.snapshot import SnapshotReader

    rows = {r.name: r for r in SnapshotReader(room).read().sessions}
    assert rows["api"].delivery == "⚠ cart.ts with @web"  # the console's flag
    assert rows["web"].delivery == "⚠ cart.ts with @api"
