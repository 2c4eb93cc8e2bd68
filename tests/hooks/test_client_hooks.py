"""Every recorded Codex CLI 0.169.0 and Gemini CLI 0.61.0 hook payload, replayed through
``agent-room hook --client KIND EVENT`` as the client runs it: the same registry states,
receipts, turn-boundary delivery and final output as Claude Code's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_room.room.service import Room
from agent_room.turn.core.clients import CLIENTS
from agent_room.turn.core.prompts import nudge_text
from tests.conftest import FIXTURES
from tests.hooks.conftest import one_logged_line, room_rows

CODEX = FIXTURES / "codex-0.169.0"
HOOK = (sys.executable, "-m", "agent_room", "hook", "--client")
GEMINI = FIXTURES / "gemini-cli-0.61.0"


def recorded(path: Path) -> dict[str, Any]:
    """The stdin a client gave its hook (the fixture also holds its env and argv)."""
    data: dict[str, Any] = json.loads(path.read_text())["stdin_json"]
    return data


class Fire:
    """Runs ``agent-room hook --client KIND EVENT`` as a process, payload on stdin."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.session = "5e55-0000"

    def __call__(
        self, kind: str, path: Path | dict[str, Any], event: str | None = None
    ) -> dict[str, Any] | None:
        payload = recorded(path) if isinstance(path, Path) else dict(path)
        payload["session_id"] = self.session  # one session through fixtures of several runs
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home.parent),
            "AGENT_ROOM_HOME": str(self.home),
            "AGENT_ROOM_NAME": "worker",
            "AGENT_ROOM_AGENT": kind,
        }
        proc = subprocess.run(
            [*HOOK, kind, event or payload["hook_event_name"]],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            timeout=30,
            check=False,
        )
        assert proc.returncode == 0
        assert not (self.home / "errors.log").exists(), (self.home / "errors.log").read_text()
        out = proc.stdout.decode()
        return json.loads(out) if out.strip() else None

    def room(self) -> Room:
        return Room.open({"AGENT_ROOM_HOME": str(self.home)})

    def state(self) -> str:
        room = self.room()
        try:
            row = room.store.session(self.session)
            return str(row["state"]) if row else "absent"
        finally:
            room.close()

    def turns(self) -> list[dict[str, Any]]:
        room = self.room()
        try:
            return room.store.turns(self.session)
        finally:
            room.close()


@pytest.fixture
def fire(room_home: Path) -> Fire:
    return Fire(room_home)


def test_codex_states_from_its_own_hooks(fire: Fire) -> None:
    fire("codex", CODEX / "hooks-tui-nodaemon" / "codex-tui-nodaemon-SessionStart-652.json")
    assert fire.state() == "idle"
    room = fire.room()
    assert room.store.session(fire.session)["agent"] == "codex"  # type: ignore[index]
    room.close()
    fire("codex", CODEX / "hooks-tui" / "codex-tui-UserPromptSubmit-594.json")
    assert fire.state() == "busy"
    fire("codex", CODEX / "hooks-tui" / "codex-tui-PermissionRequest-594.json")
    assert fire.state() == "waiting"  # an approval dialog is open
    fire("codex", CODEX / "hooks-tui" / "codex-tui-Stop-601.json")
    assert fire.state() == "idle"
    stop = recorded(CODEX / "hooks-tui" / "codex-tui-Stop-601.json")
    assert fire.turns()[-1]["output"] == stop["last_assistant_message"]  # what links carry
    assert fire.turns()[-1]["prompt_id"] == stop["turn_id"]

    fire("codex", CODEX / "hooks-tui" / "codex-tui-UserPromptSubmit-594.json")
    fire("codex", CODEX / "hooks-tui" / "codex-tui-Interrupt.json")  # Escape: no Stop follows
    assert fire.state() == "idle"
    assert fire.turns()[-1]["failed"]
    fire("codex", CODEX / "hooks-tui-nodaemon" / "codex-tui-nodaemon-SessionEnd.json")
    assert fire.state() == "ended"
    fire("codex", CODEX / "hooks-tui-nodaemon" / "codex-tui-nodaemon-SessionStart-resume.json")
    assert fire.state() == "idle"  # resumed: the same session again


def test_gemini_states_from_its_own_hooks(fire: Fire) -> None:
    fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-SessionStart-startup.json")
    assert fire.state() == "idle"
    fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-BeforeAgent.json")
    assert fire.state() == "busy"
    fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-Notification-ToolPermission.json")
    assert fire.state() == "waiting"
    fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-AfterAgent.json")
    assert fire.state() == "idle"
    after = recorded(GEMINI / "hooks-tui" / "gemini-tui-AfterAgent.json")
    assert fire.turns()[-1]["output"] == after["prompt_response"]

    fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-BeforeAgent.json")
    fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-AfterAgent-cancelled.json")
    assert fire.state() == "idle"
    assert fire.turns()[-1]["failed"]  # "[no response text]" never crosses a link
    assert fire.turns()[-1]["output"] is None
    for _ in range(3):  # /quit fires SessionEnd three times
        fire("gemini", GEMINI / "hooks-tui" / "gemini-tui-SessionEnd-1of3.json")
    assert fire.state() == "ended"


def test_every_recorded_headless_run_replays(fire: Fire) -> None:
    """The exec / headless runs too: the events the room installs change the state, the
    other recorded events are refused (logged, exit 0) and change nothing."""
    for kind, folder in (("codex", CODEX / "hooks-exec"), ("gemini", GEMINI / "hooks-headless")):
        fire.session = f"headless-{kind}"
        for event in CLIENTS[kind].events:
            if event != "SessionEnd":
                for path in folder.glob(f"*-{event}*.json"):
                    fire(kind, path)
        assert fire.state() == "idle"
        assert fire.turns()[-1]["output"].startswith(("PONG", "TOOL-RESULT-SEEN"))
        for path in folder.glob("*-SessionEnd*.json"):
            fire(kind, path)
        assert fire.state() == "ended"


def test_an_event_the_client_does_not_install_is_logged_and_ignored(fire: Fire) -> None:
    path = CODEX / "hooks-exec" / "codex-exec-PreToolUse.json"
    payload = recorded(path)
    fire.session = "5e55-0001"
    fire("codex", STARTS["codex"])  # another session: the room has rows to keep
    before = room_rows(fire.home)
    payload["session_id"] = "5e55-0000"
    proc = subprocess.run(
        [*HOOK, "codex", "PreToolUse"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "AGENT_ROOM_HOME": str(fire.home)},
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "codex PreToolUse: unknown Codex CLI event" in one_logged_line(fire.home)
    assert room_rows(fire.home) == before
    fire.session = "5e55-0000"
    assert fire.state() == "absent"


STARTS = {
    "codex": CODEX / "hooks-exec" / "codex-exec-SessionStart.json",
    "gemini": GEMINI / "hooks-tui" / "gemini-tui-SessionStart-startup.json",
}
TURN_ENDS = {"codex": "Stop", "gemini": "AfterAgent"}
"""Each client's own name of the event that ends a turn."""


@pytest.mark.parametrize("kind", sorted(STARTS))
@pytest.mark.parametrize(
    ("event", "payload", "logged"),
    [
        ("end", b"", "empty stdin"),
        ("end", b"{not json", "invalid JSON"),
        ("end", b"[1, 2]", "not a JSON object"),
        ("end", b'{"session_id": 42}', "not a string"),
        ("Frobnicate", b'{"session_id": "5e55-0000"}', "unknown"),
    ],
    ids=["empty", "invalid", "array", "type", "unknown"],
)
def test_bad_input_from_a_client_is_one_logged_line_and_changes_nothing(
    fire: Fire, kind: str, event: str, payload: bytes, logged: str
) -> None:
    event = TURN_ENDS[kind] if event == "end" else event
    fire(kind, STARTS[kind])
    before = room_rows(fire.home)
    proc = subprocess.run(
        [*HOOK, kind, event],
        input=payload,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "AGENT_ROOM_HOME": str(fire.home)},
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    line = one_logged_line(fire.home)
    assert f"{kind} {event}" in line
    assert logged in line
    assert room_rows(fire.home) == before


@pytest.mark.parametrize(
    ("kind", "start", "prompt", "stop", "prompt_event"),
    [
        (
            "codex",
            CODEX / "hooks-tui-nodaemon" / "codex-tui-nodaemon-SessionStart-652.json",
            CODEX / "hooks-tui" / "codex-tui-UserPromptSubmit-594.json",
            CODEX / "hooks-tui" / "codex-tui-Stop-601.json",
            "UserPromptSubmit",
        ),
        (
            "gemini",
            GEMINI / "hooks-tui" / "gemini-tui-SessionStart-startup.json",
            GEMINI / "hooks-tui" / "gemini-tui-BeforeAgent.json",
            GEMINI / "hooks-tui" / "gemini-tui-AfterAgent.json",
            "BeforeAgent",
        ),
    ],
)
def test_receipts_and_delivery_at_the_end_of_a_turn(
    fire: Fire, kind: str, start: Path, prompt: Path, stop: Path, prompt_event: str
) -> None:
    greeting = fire(kind, start)
    assert greeting is not None
    assert greeting["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "You are @worker" in greeting["hookSpecificOutput"]["additionalContext"]
    room = fire.room()
    room.join("lead")
    first = room.send("lead", "worker", "first BODY-ONE")

    typed = dict(recorded(prompt), prompt=nudge_text(["lead"], [first]))
    out = fire(kind, typed)
    assert out is not None
    assert out["hookSpecificOutput"]["hookEventName"] == prompt_event  # the client's name
    assert "BODY-ONE" in out["hookSpecificOutput"]["additionalContext"]
    assert room.store.message(first)["status"] == "delivered"  # type: ignore[index]

    second = room.send("lead", "worker", "second BODY-TWO")  # while the turn runs
    out = fire(kind, stop)
    assert out is not None
    assert out["decision"] == "block"  # Codex's Stop and Gemini's AfterAgent go on
    assert "BODY-TWO" in out["reason"]
    assert room.store.message(second)["status"] == "delivered"  # type: ignore[index]
    room.close()
