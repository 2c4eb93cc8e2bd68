"""The console's picture of Claude Code sessions outside the room, and of how each
message was delivered."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

from agent_room.core.native import NativeSession, SocketFacts, parse_entry
from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.turn.store.native import record_traffic
from tests.conftest import FIXTURES
from tests.poll import wait_for
from tests.ui.seed import AliveProbe

SNAP = FIXTURES / "claude-native" / "snap-4-s2-permission"


class Recorded:
    """Claude Code's registry as recorded at a permission prompt (``NativeRegistry``)."""

    sessions_dir: Path | None = None

    def sessions(self) -> list[NativeSession]:
        found = [parse_entry(json.loads(p.read_text())) for p in sorted(SNAP.glob("*.json"))]
        return [s for s in found if s is not None]

    def entry(self, pid: int) -> NativeSession | None:
        return next((s for s in self.sessions() if s.pid == pid), None)

    def socket_facts(self, path: str) -> SocketFacts | None:
        return None

    def peer_token(self, pid: int, path: str) -> str | None:
        return None


def test_sessions_outside_the_room_are_listed_and_in_the_tree(room: Room) -> None:
    room.join("backend")
    snapshot = SnapshotReader(room, native=Recorded()).read()
    outside = {r.name: r for r in snapshot.sessions if r.outside}
    assert set(outside) == {"~proj-94", "~worker-b"}
    waiting = outside["~worker-b"]
    assert waiting.state == "waiting"
    assert waiting.pane == "%3"
    assert waiting.note.startswith("outside the room (waiting: permission prompt): end it")
    assert "agent-room start worker-b" in waiting.note
    assert not next(r for r in snapshot.sessions if r.name == "backend").outside
    labels = [n.label for n in snapshot.tree]
    assert "~worker-b (outside the room, waiting: permission prompt)" in labels


def test_a_member_is_not_listed_again_as_outside(room: Room) -> None:
    facts = SessionFacts(
        session_id="b8220c56-d5dd-46db-a341-746a21195aa9",
        cwd="/home/dev/ccn/proj2",
        transcript_path=None,
        pid=None,
        pid_start=None,
        name="worker-b",
    )
    Registry(room, AliveProbe()).register(facts)  # worker-b's session is in the room
    rows = SnapshotReader(room, native=Recorded()).read().sessions
    assert [r.name for r in rows if r.outside] == ["~proj-94"]
    assert [r.name for r in rows if not r.outside] == ["worker-b"]


def test_the_flow_says_how_a_message_was_delivered(room: Room) -> None:
    room.join("backend")
    room.join("frontend")
    first = room.send("backend", "frontend", "typed")
    room.store.mark_delivered("frontend", [first], at=room.clock(), via="nudge")
    second = room.send("backend", "frontend", "through the socket")
    room.store.mark_delivered("frontend", [second], at=room.clock(), via="native")
    record_traffic(
        room.store, sender="~proj-94", recipient="frontend", body="hi", at=room.clock(), data={}
    )
    delivered = [e.summary for e in SnapshotReader(room).read().flow if e.kind == "delivered"]
    assert delivered == ["via tmux · typed", "via socket · through the socket", "via socket · hi"]


def test_another_rooms_agents_are_not_outside_this_room(room: Room, tmp_path: Path) -> None:
    """``who`` against one room must not list another room's agents as sessions outside
    every room (with advice to end them): their process names the other room."""
    other = subprocess.Popen(
        ["sleep", "60"], env={"AGENT_ROOM_HOME": str(tmp_path / "other-room"), "PATH": "/bin"}
    )
    environ = Path(f"/proc/{other.pid}/environ")
    # until it has exec'd, the child's environment is still this process's
    wait_for(lambda: b"other-room" in environ.read_bytes())
    try:

        class Elsewhere(Recorded):
            def sessions(self) -> list[NativeSession]:
                return [replace(s, pid=other.pid) for s in super().sessions()[:1]]

        snapshot = SnapshotReader(room, native=Elsewhere()).read()
        assert [r.name for r in snapshot.sessions if r.outside] == []
        snapshot = SnapshotReader(room, native=Recorded()).read()
        assert [r.name for r in snapshot.sessions if r.outside]  # without it: listed
    finally:
        other.kill()
        other.wait()
