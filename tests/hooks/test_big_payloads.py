"""A final answer of any size moves the session on: the Stop payload is read in bounded
memory and kept to what the room needs (the turn's output, capped)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_room.room.service import Room
from agent_room.turn.hooks.handlers import OUTPUT_KEEP
from agent_room.turn.hooks.payload import (
    READ_LIMIT,
    TEXT_KEEP,
    HookPayload,
    HookProblem,
    read_stdin,
)
from tests.hooks.conftest import Hook, fixture_payload

MIB = 1 << 20


def _stop(session: dict[str, Any], answer: str) -> bytes:
    """The real client's Stop payload (2.1.330's fields, in its order) with ``answer``."""
    payload = fixture_payload("claude-code-2.1.330/hook-Stop.json")
    payload.update(session_id=session["session_id"], last_assistant_message=answer)
    return json.dumps(payload).encode()


def _busy_session(hook: Hook, room_home: Path) -> dict[str, Any]:
    start = fixture_payload("claude-code-2.1.330/hook-SessionStart-startup.json")
    hook("SessionStart", start, env={"AGENT_ROOM_NAME": "backend"})
    prompt = fixture_payload("claude-code-2.1.330/hook-UserPromptSubmit.json")
    hook("UserPromptSubmit", prompt)
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        row = room.store.session(str(start["session_id"]))
        assert row is not None
        assert row["state"] == "busy"
    finally:
        room.close()
    return start


@pytest.mark.parametrize(
    "answer",
    [
        "x" * (MIB + 1),  # just over the old limit
        'é\u2028"\\ line\n' * (3 * MIB // 14),  # escapes and multi-byte text, about 3 MiB
        "y" * (READ_LIMIT + MIB),  # more than is ever read: the rest is drained unread
    ],
    ids=["1MiB+1", "3MiB-escaped", "over-read-limit"],
)
def test_a_huge_final_answer_ends_the_turn(hook: Hook, room_home: Path, answer: str) -> None:
    session = _busy_session(hook, room_home)
    code, out, err = hook("Stop", _stop(session, answer))
    assert (code, out, err) == (0, None, "")
    assert not (room_home / "errors.log").exists()
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    try:
        row = room.store.session(str(session["session_id"]))
        assert row is not None
        assert row["state"] == "idle"  # the turn ended: the session is not busy forever
        (turn,) = room.store.turns(str(session["session_id"]))
        assert turn["stopped_at"] is not None
        assert turn["output"] == answer[:OUTPUT_KEEP]
    finally:
        room.close()


def test_stdin_is_read_in_bounded_memory() -> None:
    class Pipe(io.RawIOBase):
        """A writer that sends far more than is kept, in small writes."""

        def __init__(self, size: int) -> None:
            self.left = size
            self.largest = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            self.largest = max(self.largest, len(buffer))
            n = min(len(buffer), self.left, 64 * 1024)
            buffer[:n] = b"z" * n
            self.left -= n
            return n

    pipe = Pipe(READ_LIMIT * 3)
    raw, cut = read_stdin(io.BufferedReader(pipe))
    assert cut
    assert len(raw) == READ_LIMIT
    assert pipe.left == 0  # the writer is never left blocked on a full pipe
    assert pipe.largest <= READ_LIMIT


def test_a_cut_payload_keeps_its_complete_fields() -> None:
    session = {"session_id": "48b4e422-5747-46a5-b1c0-777d43a64385"}
    raw = _stop(session, "é\\" * 1000)
    cut = raw[: raw.index(b"last_assistant_message") + 40]
    payload = HookPayload.parse(cut, "Stop", cut=True)
    assert payload.session_id == session["session_id"]
    assert payload.stop_hook_active is False
    assert payload.last_assistant_message is not None
    assert payload.last_assistant_message.startswith("é\\")


def test_text_fields_are_kept_to_what_the_room_needs() -> None:
    raw = _stop({"session_id": "s"}, "x" * (TEXT_KEEP * 2))
    payload = HookPayload.parse(raw, "Stop")
    assert payload.last_assistant_message == "x" * TEXT_KEEP


@given(st.integers(min_value=0, max_value=10_000))
def test_a_payload_cut_anywhere_parses_or_names_the_problem(at: int) -> None:
    raw = _stop({"session_id": "48b4e422"}, 'a "quoted" \\ é 😀 answer\n' * 40)
    at = at % (len(raw) + 1)
    try:
        payload = HookPayload.parse(raw[:at], "Stop", cut=True)
    except HookProblem as problem:
        said = str(problem)  # a cut that leaves no payload says why, on one line
        assert said
        assert "\n" not in said
        return
    assert payload.session_id == "48b4e422"
    answer = payload.last_assistant_message or ""
    assert ('a "quoted" \\ é 😀 answer\n' * 40).startswith(answer)
