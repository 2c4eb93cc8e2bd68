"""Links through the real hook processes and payloads: what the Stop hook records is
what crosses, link input is handed over with the link's guidance, SessionEnd severs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_room.room.crossing import Crossings
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.room.views import link_views
from tests.hooks.conftest import Hook, fixture_payload, new_session


def _start(hook: Hook, name: str) -> dict[str, Any]:
    payload = new_session("SessionStart")
    code, _, _ = hook("SessionStart", payload, env={"AGENT_ROOM_NAME": name})
    assert code == 0
    return payload


def _event(base: dict[str, Any], event: str, **fields: Any) -> dict[str, Any]:
    return {**base, "hook_event_name": event, **fields}


def test_the_recorded_stop_output_crosses_and_session_end_severs(
    hook: Hook, room_home: Path
) -> None:
    _start(hook, "a")
    b = _start(hook, "b")
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    Links(room).configure(sever_grace=0)  # no waiting for a resume here
    Links(room).open("a", "b", "what does X cost?")
    ids = [int(m["id"]) for m in room.store.queued("b")]
    prompt = _event(
        b,
        "UserPromptSubmit",
        prompt=f"[agent-room] 2 new messages ({' '.join(f'#{i}' for i in ids)})",
    )
    code, out, _ = hook("UserPromptSubmit", prompt)
    assert code == 0
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "absorb them and continue your own work" in context  # link input, not a request
    assert "what does X cost?" in context
    recorded = fixture_payload("claude-code-2.1.330/hook-Stop.json")
    stop = _event(b, "Stop", last_assistant_message=recorded["last_assistant_message"])
    assert hook("Stop", stop)[:2] == (0, None)
    Crossings(room).run_once()
    [crossing] = [m for m in room.store.history(20) if m["kind"] == "link"]
    assert crossing["body"] == f"[From @b] {recorded['last_assistant_message']}"
    assert (crossing["sender"], crossing["recipient"]) == ("b", "a")
    end = fixture_payload("claude-code-2.1.330/hook-SessionEnd-other.json")
    assert hook("SessionEnd", {**end, "session_id": b["session_id"]})[0] == 0
    Crossings(room).run_once()
    [view] = link_views(room)
    assert (view.state.value, view.close_reason) == (
        "closed",
        "severed: the responder's session ended",
    )
    room.close()


def test_each_turn_is_stored_with_where_it_came_from_on_every_transport(
    hook: Hook, room_home: Path
) -> None:
    """The hook classifies once, from what started the turn, whatever wrapped it: the
    room's nudge typed, or sent through Claude Code's socket (as its hook receives it)."""
    from agent_room.core.native import wrap
    from agent_room.turn.core.prompts import nudge_text
    from agent_room.turn.core.timers import anchor_reminder
    from agent_room.turn.room.delivery import context_for

    a = _start(hook, "a")
    _start(hook, "b")
    room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    Links(room).open("b", "a", "go")  # the rules notice and b's message to a
    notice, go = (int(m["id"]) for m in room.store.queued("a"))
    reminder = room.store.add_message(
        kind="system", sender="room", recipient="a", body=anchor_reminder(1, "b"), at=1.0
    )

    def prompt(text: str) -> None:
        payload = _event(a, "UserPromptSubmit", prompt=text)
        assert hook("UserPromptSubmit", payload)[0] == 0
        assert hook("Stop", _event(a, "Stop", last_assistant_message="ok"))[0] == 0

    socket = "/tmp/cc-socks/7.sock"
    prompt(wrap(nudge_text(["room"], [reminder]), from_socket=socket))
    prompt(nudge_text(["room", "b"], [notice, go]))
    prompt(wrap(nudge_text(["room"], [reminder]), from_socket=socket))  # again: still one
    prompt(wrap("hello from another session", from_socket=socket, name="other"))
    prompt("fix the parser")
    # what a Stop hook handed over comes back as the next prompt on Codex and Gemini
    handed = room.store.message(reminder)
    assert handed is not None
    prompt(context_for("a", [handed]))
    turns = room.store.turns(str(a["session_id"]))
    assert [(t["kind"], t["cause"]) for t in turns] == [
        ("reminder", "room"),
        ("message", "b"),
        ("reminder", "room"),
        ("message", None),
        ("human", None),
        ("reminder", "room"),
    ]
    assert room.store.message(reminder)["via"] == "native"  # type: ignore[index]
    room.close()
