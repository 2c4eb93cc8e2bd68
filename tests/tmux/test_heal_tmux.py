"""A lost Stop heals: the room locked while the agent's Stop hook runs, the hook gives up
(exit 0, one line in the error log), and the deliverer finds the turn's end in the
agent's transcript and delivers what waited, once.

The stand-in agent in a real tmux pane writes its transcript as Claude Code does; a real
``agent-room watch`` delivers, as the user runs it.
"""

from __future__ import annotations

import time
from pathlib import Path

import libtmux
import pytest

from agent_room.room.service import Room
from agent_room.room.views import audit_events
from tests.conftest import Cli
from tests.faults import write_lock_held
from tests.poll import wait_for
from tests.tmux.conftest import agent_command
from tests.tmux.test_delivery_tmux import screen

LOCK_SECONDS = 10.0
"""Longer than the agent's remaining work and a hook's whole budget (retries included)
together: the Stop is lost, and the hook gives up well before the lock goes."""


def _state(room: Room, name: str) -> str:
    return str(next(s for s in room.who() if s["name"] == name)["state"])


@pytest.mark.sqlite
def test_a_stop_lost_to_a_locked_room_is_healed_and_delivery_resumes(
    server: libtmux.Server, room_home: Path, tmp_path: Path
) -> None:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.join("backend")
    transcript = tmp_path / "frontend.jsonl"
    session = server.new_session(
        session_name="ac-frontend",
        window_command=agent_command(room_home, "frontend", "--transcript", str(transcript)),
    )
    pane = session.active_window.active_pane
    assert pane is not None
    wait_for(lambda: "You are @frontend" in screen(pane))
    try:
        with Cli(room_home).watching():
            pane.send_keys("/work 2", enter=True)  # its Stop comes once the lock is held
            wait_for(lambda: "WORKING" in screen(pane))
            mid = room.send("backend", "frontend", "lost stop")
            with write_lock_held(room_home / "room.db", LOCK_SECONDS):
                lost_at = time.monotonic()
                wait_for(lambda: "stop_hook_summary" in transcript.read_text(), timeout=15)
                ended_at = time.monotonic()
                assert ended_at - lost_at < LOCK_SECONDS  # the hook gave up within its budget
            assert "hook Stop" in (room_home / "errors.log").read_text()
            assert _state(room, "frontend") == "busy"  # what the lost hook left behind
            wait_for(lambda: room.store.message(mid)["status"] == "delivered", timeout=30)  # type: ignore[index]
            delivered_after = time.monotonic() - ended_at
            assert "lost stop" in screen(pane)  # handed over by its UserPromptSubmit hook
            healed = [
                e for e in audit_events(room) if e.kind == "session.state" and e.data.get("healed")
            ]
            assert len(healed) == 1
            assert healed[0].data["to"] == "idle"
            assert "the transcript says idle" in str(healed[0].data["healed"])
            assert screen(pane).count("PROMPT: [agent-room]") == 1  # one nudge, once
            print(f"lost Stop to delivery: {delivered_after:.1f} s")
    finally:
        room.close()
