"""Every captured payload replays through ``agent-room hook`` into the registry."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.hooks.conftest import Hook, fixture_payload

VERSIONS = ("claude-code-2.1.197", "claude-code-2.1.330")


def _session(room_home: Path, session_id: str) -> dict[str, object]:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        row = room.store.session(session_id)
        assert row is not None
        return row
    finally:
        room.close()


def _ticks(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


@pytest.mark.parametrize("version", VERSIONS)
def test_a_whole_session_replays(
    hook: Hook, room_home: Path, version: str, agent_proc: subprocess.Popen[bytes]
) -> None:
    env = {"AGENT_ROOM_NAME": "backend", "TMUX_PANE": "%5"}
    start = fixture_payload(f"{version}/hook-SessionStart-startup.json")
    sid = str(start["session_id"])

    code, out, err = hook("SessionStart", start, env=env)
    assert (code, err) == (0, "")
    assert out is not None
    context = out["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "@backend" in context["additionalContext"]
    row = _session(room_home, sid)
    assert row["name"] == "backend"
    assert row["state"] == "idle"
    assert row["pane"] == "%5"
    assert row["pid"] == agent_proc.pid
    assert row["pid_start"] == _ticks(agent_proc.pid)
    assert row["cwd"] == start["cwd"]
    assert row["transcript_path"] == start["transcript_path"]

    assert (
        hook("UserPromptSubmit", fixture_payload(f"{version}/hook-UserPromptSubmit.json"), env=env)[
            0
        ]
        == 0
    )
    assert _session(room_home, sid)["state"] == "busy"

    if version == "claude-code-2.1.197":
        notice = fixture_payload(f"{version}/hook-Notification-permission_prompt.json")
        assert hook("Notification", notice, env=env)[0] == 0
        assert _session(room_home, sid)["state"] == "waiting"

    stop = fixture_payload(f"{version}/hook-Stop.json")
    code, out, _ = hook("Stop", stop, env=env)
    assert (code, out) == (0, None)
    assert _session(room_home, sid)["state"] == "idle"

    end_name = "prompt_input_exit" if version == "claude-code-2.1.197" else "other"
    assert hook("SessionEnd", fixture_payload(f"{version}/hook-SessionEnd-{end_name}.json"))[0] == 0
    assert _session(room_home, sid)["state"] == "ended"

    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    turns = room.store.turns(sid)
    room.close()
    assert len(turns) == 1
    assert turns[0]["kind"] == "human"
    assert turns[0]["prompt"].startswith("PROMPT:")
    assert turns[0]["output"] == stop["last_assistant_message"]
    assert not (room_home / "errors.log").exists()


def test_resume_keeps_the_session_and_its_name(hook: Hook, room_home: Path) -> None:
    start = fixture_payload("claude-code-2.1.197/hook-SessionStart-startup.json")
    hook("SessionStart", start, env={"AGENT_ROOM_NAME": "mobile"})
    hook(
        "SessionEnd", fixture_payload("claude-code-2.1.197/hook-SessionEnd-prompt_input_exit.json")
    )
    assert _session(room_home, str(start["session_id"]))["state"] == "ended"
    resume = fixture_payload("claude-code-2.1.197/hook-SessionStart-resume.json")
    code, _, _ = hook("SessionStart", resume)  # a resume without the launcher's name
    assert code == 0
    row = _session(room_home, str(start["session_id"]))
    assert (row["name"], row["state"]) == ("mobile", "idle")
