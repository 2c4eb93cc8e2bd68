"""A hook's event is one transaction: written whole or not at all, and heard once by
every watcher of the room (its change count moves once)."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.core.prompts import nudge_text
from agent_room.turn.hooks import run_hook
from agent_room.turn.store.sqlite import SqliteStore
from tests.hooks.conftest import Hook, frontend_and_backend, one_logged_line, room_rows


def _changes(room: Room) -> int:
    count = room.store.changes()
    assert count is not None
    return count


@pytest.mark.sqlite
def test_a_nudged_turn_moves_the_change_count_once_at_its_prompt_and_once_at_its_stop(
    hook: Hook, room_home: Path
) -> None:
    """The prompt marks the agent busy, receipts the nudge and starts the turn; the
    stop records the turn and marks it idle: one write each, one wake-up of each watcher."""
    room, front = frontend_and_backend(hook, room_home)
    mid = room.send("backend", "frontend", "the schema is ready")
    before = _changes(room)
    prompt = {**front, "hook_event_name": "UserPromptSubmit"}
    code, out, _ = hook("UserPromptSubmit", {**prompt, "prompt": nudge_text(["backend"], [mid])})
    assert code == 0
    assert out is not None
    assert _changes(room) == before + 1
    session = room.store.session(front["session_id"])
    assert session is not None
    assert session["state"] == "busy"
    assert room.store.message(mid)["status"] == "delivered"  # type: ignore[index]
    stop = {**front, "hook_event_name": "Stop", "last_assistant_message": "on it"}
    assert hook("Stop", stop)[0] == 0
    assert _changes(room) == before + 2
    session = room.store.session(front["session_id"])
    assert session is not None
    assert session["state"] == "idle"
    room.close()


def test_a_hook_that_fails_midway_leaves_nothing_of_its_event(
    hook: Hook, room_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn cannot be stored after the state and the receipt were: neither stays,
    the message waits to be handed over again, and the error log says why."""
    room, front = frontend_and_backend(hook, room_home)
    mid = room.send("backend", "frontend", "the schema is ready")
    room.close()
    before = room_rows(room_home)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(SqliteStore, "start_turn", broken)
    payload = {
        **front,
        "hook_event_name": "UserPromptSubmit",
        "prompt": nudge_text(["backend"], [mid]),
    }
    environ = {"AGENT_ROOM_HOME": str(room_home), "HOME": str(room_home.parent)}
    stdin = io.BytesIO(json.dumps(payload).encode())
    assert run_hook(["UserPromptSubmit"], environ, stdin) == 0
    assert room_rows(room_home) == before
    assert "disk I/O error" in one_logged_line(room_home)


def _nudge_state(room: Room, nudge_id: int) -> str:
    row = room.store.conn.execute("SELECT state FROM nudges WHERE id = $1", (nudge_id,)).fetchone()
    return str(row[0])


def test_the_receipt_closes_the_nudge_it_answers_and_only_that(hook: Hook, room_home: Path) -> None:
    """The deliverer recorded a nudge and typed it; the turn it starts receipts its
    messages and closes it, in the hook's one write (nothing is left for the deliverer to
    write). A nudge whose messages are not all receipted stays open."""
    room, front = frontend_and_backend(hook, room_home)
    first, second = (room.send("backend", "frontend", f"part {n}") for n in (1, 2))
    text = nudge_text(["backend"], [first, second])
    nudge = room.store.record_nudge("frontend", front["session_id"], [first, second], text, at=1.0)
    prompt = {**front, "hook_event_name": "UserPromptSubmit"}
    hook("UserPromptSubmit", {**prompt, "prompt": nudge_text(["backend"], [first])})
    assert _nudge_state(room, nudge) == "open"  # the second still waits
    hook("UserPromptSubmit", {**prompt, "prompt": text})
    assert _nudge_state(room, nudge) == "done"
    room.close()
