"""The intercom's use case with a fake client and a clock the test moves: the 15-minute
window, failures kept in the room, and what the console's reader draws."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_room.adapters.claude import ClientMissing, Run
from agent_room.core.intercom import RESUME_WINDOW
from agent_room.room.intercom import Asker, AskFailed, Intercom
from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.room.views import audit_events


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeClient:
    """Answers every ask; ``missing`` makes it a client that cannot be run."""

    missing: bool = False
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    totals: dict[str, float] = field(default_factory=dict)

    def run(
        self, cwd: str, prompt: str, *, resume: str | None, max_turns: int, timeout: float
    ) -> Run:
        if self.missing:
            raise ClientMissing("cannot run the client claude: No such file or directory")
        self.asked.append((prompt, resume))
        session = resume or str(uuid.uuid4())
        self.totals[session] = self.totals.get(session, 0.0) + 0.05
        answer = {
            "type": "result",
            "session_id": session,
            "result": f"re: {prompt}",
            "total_cost_usd": self.totals[session],
            "num_turns": 1,
            "is_error": False,
        }
        return Run(0, json.dumps(answer), "")


@pytest.fixture
def setup(room_home: Path, tmp_path: Path) -> tuple[Room, Clock, Path]:
    clock = Clock()
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.clock = clock
    repo = tmp_path / "api"
    repo.mkdir()
    return room, clock, repo


def test_the_window_is_fifteen_minutes(setup: tuple[Room, Clock, Path]) -> None:
    room, clock, repo = setup
    client = FakeClient()
    intercom = Intercom(room, client)
    me = Asker("sess-web", "web")
    first = intercom.ask(str(repo), "auth tokens?", me, timeout=60)
    clock.now += RESUME_WINDOW
    assert intercom.ask(str(repo), "auth tokens again?", me, timeout=60)["decision"] == "resume"
    clock.now += RESUME_WINDOW + 1
    late = intercom.ask(str(repo), "auth tokens once more?", me, timeout=60)
    assert late["decision"] == "new"
    assert "Not used within 15 min" in "\n".join(late["lines"])
    assert [resume for _q, resume in client.asked] == [None, first["session_id"], None]


def test_a_failed_ask_is_recorded_and_frees_its_session(setup: tuple[Room, Clock, Path]) -> None:
    room, _clock, repo = setup
    client = FakeClient()
    intercom = Intercom(room, client)
    me = Asker("sess-web", "web")
    first = intercom.ask(str(repo), "auth tokens?", me, timeout=60)
    client.missing = True
    with pytest.raises(ClientMissing):
        intercom.ask(str(repo), "also auth tokens?", me, timeout=60)
    (failed,) = [e for e in audit_events(room) if e.kind == "intercom.failed"]
    assert "cannot run the client" in failed.data["reason"]
    assert failed.data["decision"] == "resume"
    client.missing = False
    again = intercom.ask(str(repo), "also auth tokens?", me, timeout=60)
    assert again["session_id"] == first["session_id"]  # the failed ask gave it back


def test_resume_of_a_busy_session_by_id_is_refused(setup: tuple[Room, Clock, Path]) -> None:
    room, clock, repo = setup
    intercom = Intercom(room, FakeClient())
    me = Asker("sess-web", "web")
    first = intercom.ask(str(repo), "auth tokens?", me, timeout=60)
    assert intercom.store.claim(first["session_id"], at=clock.now, until=clock.now + 100)
    with pytest.raises(AskFailed, match="busy with another ask"):
        intercom.ask(str(repo), "q", me, timeout=60, resume_id=first["session_id"])
    busy = intercom.ask(str(repo), "also auth tokens?", me, timeout=60)
    assert busy["decision"] == "new"
    assert "busy with another ask" in busy["reason"]


def test_the_reader_draws_intercom_sessions_under_their_asker(
    setup: tuple[Room, Clock, Path],
) -> None:
    room, _clock, repo = setup
    room.store.register(
        {"session_id": "sess-web", "cwd": "/w", "state": "idle"},
        wanted="web",
        explicit=True,
        at=time.time(),
        alive=lambda *_a: True,
    )
    intercom = Intercom(room, FakeClient())
    intercom.ask(str(repo), "How do auth tokens refresh?", Asker("sess-web", "web"), timeout=60)
    intercom.ask(str(repo), "also the auth tokens?", Asker("sess-web", "web"), timeout=60)
    intercom.ask(str(repo), "What is the CSS?", Asker("operator", "operator"), timeout=60)
    snapshot = SnapshotReader(room).read()
    roots = {r.label: r for r in snapshot.tree}
    (child,) = roots["web"].children
    assert child.kind == "intercom"
    assert child.label == "ask @api: How do auth tokens refresh? ($0.1000, 2 turns)"
    assert "ask @api: What is the CSS? ($0.0500, 1 turn)" in roots  # the operator's own
    asks = [e for e in snapshot.flow if e.message_kind == "ask"]
    assert [(e.sender, e.recipient) for e in asks][:1] == [("web", "api")]
    room.close()
