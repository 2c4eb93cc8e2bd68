"""What the intercom's asks cost, per ask: a resumed client reports the whole
conversation's total, so each ask keeps only what it added; counted for the asker."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.room.intercom import Asker, Intercom
from agent_room.room.service import Room
from agent_room.room.usage_report import Reports
from tests.room.test_intercom_room import Clock, FakeClient


def test_each_ask_keeps_what_it_added_to_a_resumed_sessions_total(
    room_home: Path, tmp_path: Path
) -> None:
    clock = Clock()
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.clock = clock
    repo = tmp_path / "api"
    repo.mkdir()
    intercom = Intercom(room, FakeClient())  # 0.05 a run, reported as the session's total
    me = Asker("sess-web", "web")
    first = intercom.ask(str(repo), "auth tokens?", me, timeout=60)
    clock.now += 60
    again = intercom.ask(str(repo), "auth tokens again?", me, timeout=60)
    assert again["decision"] == "resume"
    assert again["session_id"] == first["session_id"]
    (by_ask,) = Reports(room).summary("ask", 0).lines
    assert by_ask.key == "api"
    assert by_ask.requests == 2
    assert by_ask.cost_usd == pytest.approx(0.10)  # not 0.05 + 0.10
    (by_agent,) = Reports(room).summary("agent", 0).lines
    assert by_agent.key == "web"
    assert by_agent.cost_usd == pytest.approx(0.10)
