"""A resume starts Claude Code with the room's plugin, so the resumed client registers again."""

from __future__ import annotations

from pathlib import Path

from agent_room.core.enter import Move
from agent_room.core.enums import SessionState
from agent_room.plugin import claude_flags, plugin_dir
from agent_room.room.access import WITH_TOKEN
from agent_room.room.enter import Navigator, Where
from agent_room.turn.room.registry import Registry, SessionFacts
from tests.fakes import FakeMux
from tests.ui.conftest import SOCKET
from tests.ui.seed import AliveProbe, seed_room

CONSOLE = Where(socket=SOCKET, pane="%0", session_id=None, actor="operator")


def test_the_resume_carries_the_plugin_before_the_session_id(room_home: Path) -> None:
    room, _clock = seed_room(room_home)
    mux = FakeMux()
    programs = lambda: {"claude": "/opt/claude"}  # noqa: E731
    navigator = Navigator(room, mux, AliveProbe(), programs=programs, claude_args=claude_flags())
    plan = navigator.plan(navigator.find("docs", wait=0), CONSOLE)
    assert plan.move is Move.RESUME
    program = plan.argv.index("/opt/claude")
    assert plan.argv[program:] == (
        "/opt/claude",
        "--plugin-dir",
        str(plugin_dir()),
        "--allowedTools=Bash(agent-room:*),mcp__plugin_agent-room_agent-room",
        "--resume",
        "sess-docs",
    )
    navigator.carry_out(plan, CONSOLE)
    assert mux.calls[0][3] == plan.argv


def test_a_resumed_claude_session_reaches_the_rooms_tools_with_a_secret_of_its_own(
    room_home: Path,
) -> None:
    """As ``start`` runs it: the room's variables, the room's MCP address, and a new
    secret read from its file by the shell (never on the command line)."""
    room, _clock = seed_room(room_home)
    navigator = Navigator(
        room, FakeMux(), AliveProbe(), programs=lambda: {}, claude_args=claude_flags()
    )
    plan = navigator.plan(navigator.find("docs", wait=0), CONSOLE)
    assigned = dict(a.split("=", 1) for a in plan.argv[1 : plan.argv.index("sh")])
    assert plan.argv[0] == "env"
    assert assigned["AGENT_ROOM_NAME"] == "docs"
    assert assigned["AGENT_ROOM_MCP_URL"].startswith("http://127.0.0.1:")
    token_file = Path(assigned["AGENT_ROOM_MCP_TOKEN_FILE"])
    assert token_file.read_text().strip()
    assert token_file.read_text().strip() not in " ".join(plan.argv)
    assert plan.argv[plan.argv.index("sh") : plan.argv.index("claude")] == WITH_TOKEN


def test_a_live_session_is_switched_to_without_any_argv(room_home: Path) -> None:
    room, _clock = seed_room(room_home)
    navigator = Navigator(room, FakeMux(), AliveProbe(), claude_args=claude_flags())
    plan = navigator.plan(navigator.find("@frontend", wait=0), CONSOLE)
    assert plan.move is Move.SWITCH
    assert plan.argv == ()


def test_a_codex_session_resumes_with_the_program_the_settings_name(room_home: Path) -> None:
    """``codex = ...`` in room.conf or ``AGENT_ROOM_CODEX``, as ``start`` runs it."""
    room, clock = seed_room(room_home)
    registry = Registry(room, AliveProbe())
    registry.register(
        SessionFacts(session_id="sess-coder", cwd="/srv/shop/coder", name="coder", agent="codex")
    )
    room.store.start_turn("sess-coder", prompt_id=None, kind="human", prompt="go", at=clock.now)
    room.store.stop_turn("sess-coder", output="Done.", failed=False, at=clock.now)
    registry.set_state("sess-coder", SessionState.ENDED)
    navigator = Navigator(room, FakeMux(), AliveProbe(), programs=lambda: {"codex": "/opt/codex"})
    plan = navigator.plan(navigator.find("coder", wait=0), CONSOLE)
    assert plan.move is Move.RESUME
    assert plan.argv[0] == "env"
    assert "/opt/codex" in plan.argv
    assert plan.argv[plan.argv.index("/opt/codex") + 1 : plan.argv.index("/opt/codex") + 3] == (
        "resume",
        "sess-coder",
    )


def test_a_switch_to_a_live_pane_reads_no_settings(room_home: Path) -> None:
    """Only a resume needs a client's program: a jump does not load pydantic for it."""
    room, _clock = seed_room(room_home)

    def unread() -> dict[str, str]:
        raise AssertionError("the settings were read for a switch")

    navigator = Navigator(room, FakeMux(), AliveProbe(), programs=unread)
    assert navigator.plan(navigator.find("@frontend", wait=0), CONSOLE).move is Move.SWITCH
