"""A lost Stop heals with Codex and Gemini CLI too, on both engines: the turn's end hook
(Codex's Stop, Gemini's AfterAgent) cannot write (the room locked 8 s on SQLite; the
PostgreSQL server down while it runs), and the deliverer finds the turn's end in the
client's transcript and delivers what waited, once.

Each test prints the time from the lost Stop to the next delivery (``-s`` shows it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import libtmux
import pytest

from agent_room.demo.client_api import StandIn
from agent_room.room.views import audit_events
from tests.clients.conftest import ClientRoom, _end_panes
from tests.faults import write_lock_held
from tests.pgcluster import Cluster

LOCK_SECONDS = 8.0
OUTAGE = 6.0
HEALED = 60.0


@pytest.fixture
def healing(
    either_engine: Cluster | None,
    tmp_path: Path,
    standin: StandIn,
    server: libtmux.Server,
    room_home: Path,
) -> Iterator[ClientRoom]:
    del either_engine  # (the room's database is chosen first)
    opened = ClientRoom(tmp_path, standin, server, room_home)
    opened.watch()
    yield opened
    standin.held.set()
    opened.close()
    _end_panes(server)


def _delivered_at(clients: ClientRoom, message_id: int) -> float | None:
    room = clients.open()
    try:
        row = room.store.message(message_id)
    finally:
        room.close()
    return float(row["delivered_at"]) if row and row["status"] == "delivered" else None


def test_a_lost_end_of_turn_heals_from_the_transcript(
    healing: ClientRoom,
    standin: StandIn,
    either_engine: Cluster | None,
    kind: str,
    room_home: Path,
) -> None:
    clients = healing
    assert clients.run("join", "lead").code == 0
    clients.start("worker", kind)
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")
    clients.type("worker", "HELDREPLY now")  # busy: its hook wrote the turn's start
    message_id = clients.send("lead", "worker", "while the stop is lost BODY-4f2a")
    marker = "PONG: HELDREPLY now"
    engine = either_engine
    if engine is None:
        with write_lock_held(room_home / "room.db", LOCK_SECONDS):
            standin.held.set()  # the turn ends now: its end hook meets the lock
            clients.wait(lambda: marker in clients.screen("worker"), 30, "worker")
            ended = time.time()
    else:
        engine.stop("immediate")
        try:
            standin.held.set()  # the turn ends while the server is down
            clients.wait(lambda: marker in clients.screen("worker"), 30, "worker")
            ended = time.time()
            time.sleep(OUTAGE)
        finally:
            engine.start()
    restored = time.time()
    log = room_home / "errors.log"
    assert log.exists(), clients.who()
    assert ("Stop" if kind == "codex" else "AfterAgent") in log.read_text()  # lost
    clients.wait(lambda: _delivered_at(clients, message_id), HEALED, "worker")
    delivered = _delivered_at(clients, message_id)
    assert delivered is not None
    clients.wait(lambda: standin.saw("BODY-4f2a"), 30, "worker")
    room = clients.open()
    try:
        healed = [
            e.data
            for e in audit_events(room, limit=5000)
            if e.kind == "session.state" and e.data.get("healed")
        ]
    finally:
        room.close()
    assert healed
    assert "the transcript says idle" in str(healed[0]["healed"])
    print(
        f"\n[heal] {kind} {'postgresql' if engine else 'sqlite'} tmux: lost Stop to delivery"
        f" {delivered - ended:.1f} s (fault cleared to delivery {delivered - restored:.1f} s)"
    )
