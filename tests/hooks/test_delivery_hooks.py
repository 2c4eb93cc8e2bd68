"""Messages handed over through the recipient's own hooks: nudge receipts and Stop blocks."""

from __future__ import annotations

from pathlib import Path

from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.turn.core.prompts import nudge_text
from tests.hooks.conftest import Hook, frontend_and_backend, new_session


def test_nudge_is_receipted_once_and_bodies_become_context(hook: Hook, room_home: Path) -> None:
    room, front = frontend_and_backend(hook, room_home)
    ids = [room.send("backend", "frontend", f"body {n}") for n in (1, 2)]
    prompt = {
        **front,
        "hook_event_name": "UserPromptSubmit",
        "prompt": nudge_text(["backend"], ids),
    }
    code, out, _ = hook("UserPromptSubmit", prompt)
    assert code == 0
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "from: backend\nto: frontend\n" in context
    assert "body 1" in context
    assert "body 2" in context
    assert [r["status"] for r in room.history()] == ["delivered", "delivered"]
    # the same nudge again (a retried Enter): nothing is delivered twice
    code, out, _ = hook("UserPromptSubmit", prompt)
    assert (code, out) == (0, None)
    delivered = [e for e in audit_events(room) if e.kind == "message.delivered"]
    assert [e.message_id for e in delivered] == ids
    room.close()


def test_a_nudge_receipts_only_the_recipients_own_messages(hook: Hook, room_home: Path) -> None:
    """A prompt that names another agent's messages (typed by anyone) delivers nothing."""
    room, front = frontend_and_backend(hook, room_home)
    room.join("mobile")
    theirs = room.send("frontend", "mobile", "for mobile only")
    prompt = {
        **front,
        "hook_event_name": "UserPromptSubmit",
        "prompt": nudge_text(["frontend"], [theirs]),
    }
    code, out, _ = hook("UserPromptSubmit", prompt)
    assert (code, out) == (0, None)
    assert room.store.message(theirs)["status"] == "queued"  # type: ignore[index]
    room.close()


def test_busy_recipient_gets_messages_at_stop_at_most_three_times(
    hook: Hook, room_home: Path
) -> None:
    room, front = frontend_and_backend(hook, room_home)
    hook("UserPromptSubmit", {**front, "hook_event_name": "UserPromptSubmit", "prompt": "work"})
    stop = {
        **front,
        "hook_event_name": "Stop",
        "last_assistant_message": "done",
        "stop_hook_active": False,
    }
    for expected in range(3):
        mid = room.send("backend", "frontend", f"while busy {expected}")
        code, out, _ = hook("Stop", stop)
        assert code == 0
        assert out is not None
        assert out["decision"] == "block"
        assert f"while busy {expected}" in out["reason"]
        assert room.store.message(mid)["status"] == "delivered"  # type: ignore[index]
    room.send("backend", "frontend", "fourth")
    code, out, _ = hook("Stop", {**stop, "stop_hook_active": True})
    assert (code, out) == (0, None)  # the cap: the agent is let go
    session = room.store.session(str(front["session_id"]))
    assert session is not None
    assert session["state"] == "idle"
    assert session["stop_blocks"] == 3
    # a new turn resets the count
    hook("UserPromptSubmit", {**front, "hook_event_name": "UserPromptSubmit", "prompt": "more"})
    code, out, _ = hook("Stop", stop)
    assert out is not None
    assert "fourth" in out["reason"]
    room.close()


def test_ten_messages_while_busy_arrive_as_one_delivery(hook: Hook, room_home: Path) -> None:
    room, front = frontend_and_backend(hook, room_home)
    hook("UserPromptSubmit", {**front, "hook_event_name": "UserPromptSubmit", "prompt": "work"})
    ids = [room.send("backend", "frontend", f"m{n}") for n in range(10)]
    _code, out, _ = hook(
        "Stop", {**front, "hook_event_name": "Stop", "last_assistant_message": "x"}
    )
    assert out is not None
    assert out["reason"].count("\nfrom: backend") + out["reason"].startswith("from:") == 10
    assert "10 new messages" in out["reason"]
    assert all(room.store.message(i)["status"] == "delivered" for i in ids)  # type: ignore[index]
    room.close()


def test_session_start_tells_the_unread_count(hook: Hook, room_home: Path) -> None:
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.join("backend")
    room.join("frontend")
    room.send("backend", "frontend", "waiting for you")
    room.close()
    _code, out, _ = hook(
        "SessionStart", new_session("SessionStart"), env={"AGENT_ROOM_NAME": "frontend"}
    )
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "1 unread message" in text
    assert "agent-room inbox" in text


def _unread(room: Room, name: str) -> int:
    return int(next(s for s in room.who() if s["name"] == name)["unread"])


def test_bodies_handed_to_the_model_are_read(hook: Hook, room_home: Path) -> None:
    """A nudge's context and a Stop block's reason are read: a resumed session is not
    told to read them again, and the unread count shows only what waits."""
    room, front = frontend_and_backend(hook, room_home)
    nudged = room.send("backend", "frontend", "by nudge")
    prompt = {**front, "hook_event_name": "UserPromptSubmit"}
    _code, out, _ = hook(
        "UserPromptSubmit", {**prompt, "prompt": nudge_text(["backend"], [nudged])}
    )
    assert out is not None
    at_stop = room.send("backend", "frontend", "at the turn boundary")
    stop = {**front, "hook_event_name": "Stop", "last_assistant_message": "ok"}
    _code, out, _ = hook("Stop", stop)
    assert out is not None
    assert "at the turn boundary" in out["reason"]
    for mid in (nudged, at_stop):
        row = room.store.message(mid)
        assert row is not None
        assert row["status"] == "delivered"
        assert row["read_at"] is not None
    assert room.store.unread("frontend") == []
    assert _unread(room, "frontend") == 0
    assert room.inbox("frontend") == []  # `agent-room inbox` has nothing to show again
    waiting = room.send("backend", "frontend", "not handed over yet")
    assert _unread(room, "frontend") == 1
    _code, out, _ = hook(
        "SessionStart", {**front, "hook_event_name": "SessionStart", "source": "resume"}
    )
    assert out is not None
    assert "You have 1 unread message" in out["hookSpecificOutput"]["additionalContext"]
    assert [int(r["id"]) for r in room.store.unread("frontend")] == [waiting]
    room.close()


def test_a_room_that_delivered_before_counts_those_bodies_read() -> None:
    """Rooms that delivered through hooks before the rule: the migration reads them."""
    import sqlite3

    from agent_room.turn.store.db import _statements
    from agent_room.turn.store.schema import MIGRATIONS

    index = next(i for i, m in enumerate(MIGRATIONS) if "ADD COLUMN failed_at" in m)
    conn = sqlite3.connect(":memory:")
    for script in MIGRATIONS[:index]:
        for statement in _statements(script):
            conn.execute(statement)
    insert = (
        "INSERT INTO messages (kind, sender, recipient, body, created_at, status, delivered_at)"
        " VALUES ('message', 'a', 'b', $1, 1.0, $2, $3)"
    )
    conn.execute(insert, ("handed over", "delivered", 2.0))
    conn.execute(insert, ("waiting", "queued", None))
    for statement in _statements(MIGRATIONS[index]):
        conn.execute(statement)
    read = conn.execute("SELECT body, read_at FROM messages ORDER BY id").fetchall()
    assert read == [("handed over", 2.0), ("waiting", None)]


def test_session_start_hands_over_a_resume_checkpoint(hook: Hook, room_home: Path) -> None:
    from agent_room.room.checkpoints import queue_resume

    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    room.join("backend")
    room.store.add_message(
        kind="chat", sender="backend", recipient="worker", body="also waiting", at=room.clock()
    )
    resume = queue_resume(room, "worker", "## Resuming @worker from checkpoint #1\n- ran: make")
    room.close()
    _code, out, _ = hook(
        "SessionStart", new_session("SessionStart"), env={"AGENT_ROOM_NAME": "worker"}
    )
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "## Resuming @worker from checkpoint #1\n- ran: make" in text
    assert "[agent-room resume]" not in text
    assert "You have 1 unread message" in text
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    assert resume not in [int(r["id"]) for r in room.store.unread("worker")]
    room.close()
