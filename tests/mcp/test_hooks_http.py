"""Claude Code's HTTP hooks handled by the room's server: the same handler as the command
hook's, for the agent whose secret came with the event, once per event."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agent_room.mcp.serve import Serving
from agent_room.room.access import http_hooks, mint, read_token, url
from agent_room.room.service import Room
from tests.hooks.conftest import one_logged_line, room_rows
from tests.room.conftest import register


@pytest.fixture
def sessions(room: Room) -> Room:
    register(room, "alpha", session_id="s-alpha")
    register(room, "beta", session_id="s-beta")
    return room


def hook(
    serving: Serving, token: str | None, event: str, payload: dict[str, Any] | bytes
) -> tuple[int, bytes]:
    """POST ``payload`` (an object, or the raw body) to the event's hook address."""
    assert serving.port is not None
    target = http_hooks(url(serving.port))["hooks"][event][0]["hooks"][0]["url"]  # type: ignore[index]
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    request = urllib.request.Request(target, body, headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def prompt(session_id: str, text: str, prompt_id: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
        "prompt_id": prompt_id,
        "cwd": "/tmp",
        "transcript_path": "/tmp/t.jsonl",
    }


def test_a_turn_through_http_hooks_is_recorded_once(
    room_home: Path, served: Serving, sessions: Room
) -> None:
    token = read_token(mint(str(room_home), "alpha"))
    status, _ = hook(served, token, "UserPromptSubmit", prompt("s-alpha", "work on it", "p-1"))
    assert status == 200
    assert sessions.store.holder("alpha")["state"] == "busy"  # type: ignore[index]
    # the same event again (the command hook also fired, or the client retried): once
    status, _ = hook(served, token, "UserPromptSubmit", prompt("s-alpha", "work on it", "p-1"))
    assert status == 200
    assert [t["prompt_id"] for t in sessions.store.turns("s-alpha")] == ["p-1"]
    stop = {"session_id": "s-alpha", "hook_event_name": "Stop", "last_assistant_message": "done"}
    status, _ = hook(served, token, "Stop", stop)
    assert status == 200
    (turn,) = sessions.store.turns("s-alpha")
    assert turn["output"] == "done"
    assert sessions.store.holder("alpha")["state"] == "idle"  # type: ignore[index]


def test_a_waiting_message_is_handed_over_in_the_hooks_answer(
    room_home: Path, served: Serving, sessions: Room
) -> None:
    token = read_token(mint(str(room_home), "beta"))
    message_id = sessions.send("alpha", "beta", "the body (http-9)")
    nudge = f"[agent-room] 1 new message from @alpha (#{message_id})"
    status, body = hook(served, token, "UserPromptSubmit", prompt("s-beta", nudge, "p-2"))
    assert status == 200
    answer = json.loads(body)
    assert "the body (http-9)" in answer["hookSpecificOutput"]["additionalContext"]
    assert sessions.store.message(message_id)["status"] == "delivered"  # type: ignore[index]


def test_no_secret_no_hook_and_no_registration_from_the_server(
    room_home: Path, served: Serving, sessions: Room
) -> None:
    token = read_token(mint(str(room_home), "alpha"))
    before = room_rows(room_home)
    status, _ = hook(served, None, "Stop", {"session_id": "s-alpha", "hook_event_name": "Stop"})
    assert status == 401
    stranger = prompt("s-unknown", "hello", "p-3")
    status, _ = hook(served, token, "UserPromptSubmit", stranger)
    assert status == 200  # a hook never breaks the agent: logged, left
    assert sessions.store.session("s-unknown") is None
    assert "s-unknown of @alpha is not registered" in one_logged_line(room_home)
    assert room_rows(room_home) == before


@pytest.mark.parametrize(
    ("body", "logged"),
    [
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"session_id": 42, "hook_event_name": "Stop"}', "not a string"),
        (b'{"session_id": "s-alpha", "hook_event_name": "SessionStart"}', "is for SessionStart"),
    ],
    ids=["invalid", "array", "type", "mismatch"],
)
def test_bad_input_over_http_is_one_logged_line_and_changes_nothing(
    room_home: Path, served: Serving, sessions: Room, body: bytes, logged: str
) -> None:
    token = read_token(mint(str(room_home), "alpha"))
    before = room_rows(room_home)
    status, _ = hook(served, token, "Stop", body)
    assert status == 200  # a hook never breaks the agent
    assert logged in one_logged_line(room_home)
    assert room_rows(room_home) == before
