"""``agent-room enter`` / ``exit-agent`` as processes: one clear line and an exit code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_room.core.enums import SessionState
from agent_room.room.service import Room
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.turn.store.sqlite import SqliteStore
from tests.conftest import Cli, Result


def _register(
    home: Path,
    name: str,
    pid: int,
    *,
    pane: str | None,
    ended: bool = False,
    had_turn: bool = True,
    socket: str | None = None,
    parent: str | None = None,
) -> None:
    from agent_room.adapters.processes import SystemProbe
    from agent_room.turn.procfs import read_stat

    stat = read_stat(pid)
    room = Room(SqliteStore(home))
    try:
        registry = Registry(room, SystemProbe())
        registry.register(
            SessionFacts(
                session_id=f"sess-{name}",
                cwd="/srv/shop",
                transcript_path=None,
                pid=pid,
                pid_start=stat.start_ticks if stat else None,
                pane=pane,
                tmux_socket=socket,
                name=name,
                parent_hint=parent,
            )
        )
        if ended:  # after a turn: a conversation its client can resume
            if had_turn:
                room.store.start_turn(
                    f"sess-{name}", prompt_id=None, kind="human", prompt="go", at=room.clock()
                )
            registry.set_state(f"sess-{name}", SessionState.ENDED)
    finally:
        room.close()


def _one_line(result: Result, code: int, text: str) -> None:
    assert result.code == code, result
    err = result.err
    assert text in err, err
    assert "Traceback" not in err


def test_enter_an_unknown_name_waits_then_says_so(cli: Cli) -> None:
    result = cli("enter", "nobody", "--wait", "0.5")
    _one_line(result, 1, "waiting up to 0.5 s for nobody")
    assert "no session named or with id 'nobody' in the room (waited 0.5 s)" in result.err


def test_enter_refuses_a_session_live_elsewhere(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    _register(room_home, "backend", agent_proc.pid, pane=None)
    result = cli("enter", "backend", "--wait", "0")
    _one_line(result, 1, "live elsewhere")
    assert "--force" in result.err


def test_enter_an_ended_session_warns_and_needs_a_terminal(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    _register(room_home, "docs", agent_proc.pid, pane=None, ended=True)
    result = cli("enter", "sess-docs", "--wait", "0")
    _one_line(result, 1, "not a terminal")
    assert "warning: @docs already ended - entering read-only session sess-docs" in result.err
    assert "warning: @docs has no known parent" in result.err
    # a resume starts a new tmux session: there is no pane to name yet
    assert (
        "agent-room: resuming @docs starts it in a new tmux session to attach to, but this is"
        " not a terminal to attach: run it from a terminal or inside tmux"
    ) in result.err
    assert "None" not in result.err


def test_enter_refuses_an_ended_session_that_never_had_a_turn(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    """Its client has no such conversation: a resume would open a pane that dies at
    once. A transcript that holds only the client's own bookkeeping is no conversation."""
    _register(room_home, "a1", agent_proc.pid, pane="%3", ended=True, had_turn=False)
    result = cli("enter", "a1", "--wait", "0")
    _one_line(result, 1, "@a1 has no conversation to resume: it ended before its first turn")
    assert "entered" not in result.out + result.err


def test_exit_agent_outside_an_agent_is_bad_input(cli: Cli) -> None:
    _one_line(cli("exit-agent"), 2, "cannot tell which agent session this is")


def test_exit_agent_with_nowhere_to_go(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    _register(room_home, "solo", agent_proc.pid, pane=None)
    result = cli("exit-agent", "--root", env={"CLAUDE_CODE_SESSION_ID": "sess-solo"})
    _one_line(result, 1, "@solo was not entered from anywhere and has no parent session")


@pytest.mark.parametrize("command", ["enter", "exit-agent", "console"])
def test_help(cli: Cli, command: str) -> None:
    result = cli(command, "--help")
    assert result.code == 0
    assert result.out.startswith(f"Usage: agent-room {command}")


def test_bad_wait_is_a_usage_error(cli: Cli) -> None:
    _one_line(cli("enter", "x", "--wait", "forever"), 2, "invalid time")


def test_no_arguments_without_a_terminal_prints_help(cli: Cli) -> None:
    result = cli()
    assert result.code == 0
    assert result.out.startswith("Usage: agent-room")
    assert "console" in result.out
