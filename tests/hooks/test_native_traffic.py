"""Messages Claude Code sessions send one another with their own SendMessage tool, as
the recipient's UserPromptSubmit hook sees them (recorded payloads of 2.1.330)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from agent_room.core.native import wrap
from agent_room.room.service import Room
from agent_room.turn.core.format import format_terminal_messages
from tests.conftest import FIXTURES
from tests.hooks.conftest import Hook, new_session

PAYLOADS = FIXTURES / "claude-native" / "user-prompt-submit-cross-session.jsonl"


def _recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PAYLOADS.read_text().splitlines()]


def _join(hook: Hook, name: str, pid: int) -> dict[str, Any]:
    payload = new_session("SessionStart")
    code, _, err = hook("SessionStart", payload, env={"AGENT_ROOM_NAME": name}, pid=pid)
    assert code == 0, err
    return payload


def test_send_message_traffic_is_in_the_history_with_the_verified_sender(
    hook: Hook, room_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    _join(hook, "proj-94", agent_proc.pid)
    worker = _join(hook, "worker-b", os.getpid())
    first, from_fake = _recorded()[0], _recorded()[1]
    # the recorded sender's socket, renamed for the sender's process in this test
    prompt = first["prompt"].replace("/28534.sock", f"/{agent_proc.pid}.sock")
    for text in (prompt, from_fake["prompt"]):
        payload = {**first, "session_id": worker["session_id"], "prompt": text}
        code, out, err = hook("UserPromptSubmit", payload, pid=os.getpid())
        assert code == 0, err
        assert out is None  # nothing added to the model's context: it has the message
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        history = room.history(10)
        turns = room.store.turns(worker["session_id"])
    finally:
        room.close()
    assert [(m["kind"], m["sender"], m["recipient"], m["status"], m["via"]) for m in history] == [
        ("native", "proj-94", "worker-b", "delivered", "native"),
        ("native", "~fake-recv", "worker-b", "delivered", "native"),
    ]
    assert history[0]["body"] == "hello from proj-94 via SendMessage"
    printed = format_terminal_messages(history)  # what agent-room history prints
    assert "from: ~fake-recv\nto: worker-b\n" in printed
    assert printed.count("kind: native\ndelivery: via socket\n---\n") == 2
    assert len(turns) == 2
    assert not (room_home / "errors.log").exists()


def test_the_rooms_own_nudge_through_the_socket_is_a_receipt(hook: Hook, room_home: Path) -> None:
    worker = _join(hook, "worker-b", os.getpid())
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        room.join("backend")
        message_id = room.send("backend", "worker-b", "the contract moved (body-91)")
    finally:
        room.close()
    nudge = f"[agent-room] 1 new message from @backend (#{message_id})"
    prompt = wrap(nudge, from_socket="/tmp/cc-socks/1.sock")
    payload = {**_recorded()[0], "session_id": worker["session_id"], "prompt": prompt}
    code, out, err = hook("UserPromptSubmit", payload, pid=os.getpid())
    assert code == 0, err
    assert out is not None
    assert "body-91" in out["hookSpecificOutput"]["additionalContext"]
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        row = room.store.message(message_id)
        history = room.history(10)
    finally:
        room.close()
    assert row is not None
    assert (row["status"], row["via"]) == ("delivered", "native")
    assert [m["kind"] for m in history] == ["chat"]  # the nudge is not traffic of its own
