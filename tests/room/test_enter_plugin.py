"""A resume starts Claude Code with the room's plugin, so the resumed client registers again."""

from __future__ import annotations

from pathlib import Path

from agent_room.core.enter import Move
from agent_room.plugin import claude_flags, plugin_dir
from agent_room.room.enter import Navigator, Where
from tests.fakes import FakeMux
from tests.ui.conftest import SOCKET
from tests.ui.seed import AliveProbe, seed_room

CONSOLE = Where(socket=SOCKET, pane="%0", session_id=None, actor="operator")


def test_the_resume_carries_the_plugin_before_the_session_id(room_home: Path) -> None:
    room, _clock = seed_room(room_home)
    mux = FakeMux()
    navigator = Navigator(room, mux, AliveProbe(), claude="/opt/claude", claude_args=claude_flags())
    plan = navigator.plan(navigator.find("docs", wait=0), CONSOLE)
    assert plan.move is Move.RESUME
    assert plan.argv == (
        "/opt/claude",
        "--plugin-dir",
        str(plugin_dir()),
        "--allowedTools=Bash(agent-room:*),mcp__plugin_agent-room_agent-room",
        "--resume",
        "sess-docs",
    )
    navigator.carry_out(plan, CONSOLE)
    assert mux.calls[0][3] == plan.argv


def test_a_live_session_is_switched_to_without_any_argv(room_home: Path) -> None:
    room, _clock = seed_room(room_home)
    navigator = Navigator(room, FakeMux(), AliveProbe(), claude_args=claude_flags())
    plan = navigator.plan(navigator.find("@frontend", wait=0), CONSOLE)
    assert plan.move is Move.SWITCH
    assert plan.argv == ()
