"""The memory of a room spanning machines: each host's memory worker holds its own
host's lease and reads only its own host's transcripts (another host's files are out of
its reach); a handover's context and a resume built on any host use what the sender's
host indexed. Simulated with two host ids on one room (a SQLite file, or PostgreSQL in
the engine pass)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.core.entities import from_text
from agent_room.core.handover import HandoverFields
from agent_room.room.checkpoints import HOOKED_COMPACTION, Checkpoints
from agent_room.room.entities import Entities
from agent_room.room.memory import PROBLEM
from agent_room.room.peek import peek
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.store import checkpoints as store_checkpoints
from agent_room.store import entities as store_entities
from agent_room.store import memory as store_memory
from agent_room.turn.core.errors import Refused
from agent_room.turn.core.prompts import COMPACTING
from agent_room.workers.memory import MemoryWorker, memory_lease
from tests.room.conftest import register

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
EXCERPT = "spotter_excerpt_turn_end_compact.jsonl"


def _open(home: Path, host: str, monkeypatch: pytest.MonkeyPatch) -> Room:
    monkeypatch.setenv("AGENT_ROOM_HOST", host)  # read when the store opens
    return Room.open({"AGENT_ROOM_HOME": str(home)})


def _transcript(tmp_path: Path, host: str) -> Path:
    """A transcript in a directory of its own host."""
    path = tmp_path / host / "session.jsonl"
    path.parent.mkdir()
    shutil.copy(TRANSCRIPTS / EXCERPT, path)
    return path


@pytest.fixture
def hosts(
    room_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Room, Room]]:
    """The same room seen from ``laptop`` (where @web runs) and ``devbox`` (@api)."""
    laptop = _open(room_home, "laptop", monkeypatch)
    devbox = _open(room_home, "devbox", monkeypatch)
    register(laptop, "web", transcript_path=str(_transcript(tmp_path, "laptop")))
    register(devbox, "api", transcript_path=str(_transcript(tmp_path, "devbox")))
    yield laptop, devbox
    laptop.close()
    devbox.close()


@pytest.fixture
def workers(hosts: tuple[Room, Room]) -> Iterator[tuple[MemoryWorker, MemoryWorker]]:
    """A memory worker of each host's watch, on its leases."""
    made = tuple(MemoryWorker(room, SystemProbe()) for room in hosts)
    yield made[0], made[1]
    for worker in made:
        worker.release()


def _problems(room: Room) -> list[str]:
    return [str(e.data["problem"]) for e in audit_events(room) if e.kind == PROBLEM]


def test_each_hosts_worker_holds_its_lease_and_reads_only_its_transcripts(
    hosts: tuple[Room, Room], workers: tuple[MemoryWorker, MemoryWorker]
) -> None:
    laptop, devbox = hosts
    on_laptop, on_devbox = workers
    assert on_laptop.run_once()
    assert store_memory.cursor(laptop.store, "s-web") is not None
    assert store_memory.cursor(laptop.store, "s-api") is None  # devbox's file: not read here
    assert on_devbox.run_once()  # not standing by: its host's lease is its own
    assert on_laptop.run_once()
    assert on_laptop.active
    assert on_devbox.active
    for room, worker in ((laptop, on_laptop), (devbox, on_devbox)):
        held = room.store.lease(memory_lease(room.store.host))
        assert held is not None
        assert worker.lease is not None
        assert held["holder"] == worker.lease.holder
        assert held["host"] == room.store.host
    assert store_memory.cursor(laptop.store, "s-api") is not None
    assert store_memory.items(laptop.store, "s-api")  # devbox's index, seen from the laptop
    assert _problems(laptop) == []


def test_the_rooms_messages_are_scanned_for_entities_by_one_host(
    hosts: tuple[Room, Room], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both hosts' workers look at the same messages; the one that moves the scan's
    place first names their entities, the other leaves them."""
    laptop, devbox = hosts
    laptop.send("web", "api", "the trace header is set in lib/web/trace_plug.ex")
    named: list[int] = []
    read = store_entities.messages_after

    def meanwhile(store: object, after: int, limit: int = 500) -> list[dict[str, object]]:
        found = read(store, after, limit)  # type: ignore[arg-type]
        if store is laptop.store:
            named.append(Entities(devbox).scan_messages())  # devbox's pass, meanwhile
        return found

    monkeypatch.setattr(store_entities, "messages_after", meanwhile)
    named.append(Entities(laptop).scan_messages())
    assert named[0] > 0
    assert named[1] == 0


def test_an_entity_both_hosts_name_at_once_is_one_entity(
    hosts: tuple[Room, Room], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both hosts' workers run at once: one may add an entity between the other's look
    for it and its own adding; that one's mention then joins the entity."""
    laptop, devbox = hosts
    mention = from_text("see lib/web/trace_plug.ex", context="the trace plug")
    ids: list[int] = []
    known = store_entities.keys

    def meanwhile(store: object, kind: str) -> dict[int, str]:
        found = known(store, kind)  # type: ignore[arg-type]
        if store is laptop.store and not ids:
            ids.append(Entities(devbox).mention(mention[0], agent="api", source="transcript"))
        return found

    monkeypatch.setattr(store_entities, "keys", meanwhile)
    ids.append(Entities(laptop).mention(mention[0], agent="web", source="transcript"))
    assert ids[0] == ids[1]
    assert [m["agent"] for m in store_entities.mentions(laptop.store, ids[0])] == ["web", "api"]


def test_a_handover_from_another_host_is_approved_with_its_hosts_context(
    hosts: tuple[Room, Room], workers: tuple[MemoryWorker, MemoryWorker]
) -> None:
    laptop, devbox = hosts
    on_laptop, on_devbox = workers
    fields = HandoverFields(
        what_changed="hook controllers traced",
        what_to_do="check the hooks_controller trace headers",
        contract="traceparent header",
    )
    handover = devbox.send_handover("api", "web", fields=fields)
    assert on_laptop.run_once()
    assert store_memory.context(laptop.store, handover) is None  # @api's host prepares it
    assert on_devbox.run_once()
    prepared = store_memory.context(laptop.store, handover)
    assert prepared is not None
    assert "hooks_controller.ex" in prepared["text"]
    laptop.approve(handover)  # the operator's console on the laptop
    body = laptop.store.message(handover)
    assert body is not None
    assert "## Context from @api's session" in body["body"]
    assert "hooks_controller.ex" in body["body"]


def test_approved_on_another_host_before_the_context_was_prepared(
    hosts: tuple[Room, Room], workers: tuple[MemoryWorker, MemoryWorker]
) -> None:
    """The laptop builds the context from what devbox indexed; it never opens the path of
    devbox's transcript (here it is gone, as it would be on another machine)."""
    laptop, devbox = hosts
    _, on_devbox = workers
    assert on_devbox.run_once()  # devbox reads @api's transcript as it grows
    api = devbox.store.holder("api")
    assert api is not None
    Path(api["transcript_path"]).unlink()
    handover = devbox.send_handover("api", "web", body="check the hooks_controller trace headers")
    laptop.approve(handover)
    body = laptop.store.message(handover)
    assert body is not None
    assert "## Context from @api's session" in body["body"]
    assert "hooks_controller.ex" in body["body"]
    assert _problems(laptop) == []  # no attempt to read another host's file


def test_a_resume_on_another_host_uses_its_hosts_index(
    hosts: tuple[Room, Room], workers: tuple[MemoryWorker, MemoryWorker]
) -> None:
    laptop, devbox = hosts
    _, on_devbox = workers
    assert on_devbox.run_once()
    api = devbox.store.holder("api")
    assert api is not None
    Path(api["transcript_path"]).unlink()
    checkpoints = Checkpoints(laptop)
    taken = checkpoints.take_named("api", note="from the laptop")
    indexed = store_memory.cursor(laptop.store, "s-api")
    assert indexed is not None
    assert store_checkpoints.get(laptop.store, taken)["upto_seq"] == indexed["seq"]  # type: ignore[index]
    assert "- ran: git status --short" in checkpoints.context(f"#{taken}")
    assert _problems(laptop) == []


def test_a_sessions_end_and_compaction_are_checkpointed_by_its_own_host(
    hosts: tuple[Room, Room], workers: tuple[MemoryWorker, MemoryWorker]
) -> None:
    laptop, devbox = hosts
    on_laptop, on_devbox = workers

    def kinds(name: str) -> list[str]:
        return [c["kind"] for c in store_checkpoints.listed(laptop.store, name=name)]

    assert on_devbox.run_once()  # each host's first look at the compactions starts now
    assert on_laptop.run_once()
    before = kinds("api").count("pre_compact")
    # the PreCompact hook of a later compaction than the one the transcript shows
    later = devbox.clock() + HOOKED_COMPACTION + 60
    devbox.store.logevent(COMPACTING, "room", at=later, subject="s-api")
    devbox.store.set_state("s-api", "ended", at=devbox.clock())
    assert on_laptop.run_once()
    assert on_laptop.run_once()
    assert kinds("api").count("session_end") == 0  # not the laptop's session
    assert on_devbox.run_once()
    assert kinds("api").count("session_end") == 1
    assert kinds("api").count("pre_compact") == before + 1  # the laptop did not skip it


def test_a_peek_at_another_hosts_agent_says_where_its_transcript_is(
    hosts: tuple[Room, Room],
) -> None:
    laptop, devbox = hosts
    assert peek(devbox, "api", viewer=None, turns=1).tail.turns
    with pytest.raises(Refused, match="@api runs on devbox, where its transcript is"):
        peek(laptop, "api", viewer=None, turns=1)
