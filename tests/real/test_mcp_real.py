"""Real Claude Code agents calling the room's tools over MCP: the model's tool calls
(``mcp__agent-room__...``) go to the room's server in ``watch``, with no process started
for them, and everything the room promises for ``agent-room send`` holds."""

from __future__ import annotations

import signal
import subprocess
import sys
from typing import Any

from agent_room.demo.model_api import Reply, Script
from agent_room.room.access import serving_pid
from tests.real.conftest import TURN, RealRoom
from tests.real.test_messages import _delivered

PREFIX = "mcp__plugin_agent-room_agent-room__"
"""Claude Code names a plugin's MCP server ``plugin:PLUGIN:SERVER``, its tools so."""
SEND = f"{PREFIX}send_message"
TIMER = f"{PREFIX}set_timer"


def calls(script: Script, prompt: str, tool: str, args: dict[str, Any]) -> None:
    """On ``prompt`` the model loads ``tool`` (Claude Code defers MCP tools behind
    ToolSearch) and calls it with ``args``; the rule of an earlier call is replaced."""
    script.rules[:] = [r for r in script.rules if not r.after_tool]
    script.add(prompt, Reply(call=("ToolSearch", {"query": f"select:{tool}"})))
    script.add(f"tool_reference:{tool}", Reply(call=(tool, args)), after_tool=True)


def _history(real: RealRoom) -> list[dict[str, Any]]:
    return real.rows("history")


def test_the_model_sends_a_message_hands_over_and_sets_a_timer_through_the_tools(
    real: RealRoom, script: Script
) -> None:
    body = "GET /tasks is live over MCP (mcp-body-31)"
    calls(script, "MCP-SEND", SEND, {"recipient": "@frontend", "text": body})
    handover = {
        "recipient": "@frontend",
        "text": "see the notes",
        "handover": True,
        "changed": "Added GET /tasks",
        "todo": "Build the list view (mcp-ho-32)",
    }
    timer = {"intent": "anchor", "duration": "10m", "text": "back to the API (mcp-anchor-33)"}
    real.start("backend", "frontend")
    both = ("backend", "frontend")

    real.type("backend", "MCP-SEND: tell frontend over the room's tools")
    sent = real.wait(lambda: [m for m in _history(real) if m["body"] == body], TURN, *both)
    assert isinstance(sent, list)
    assert [(m["sender"], m["recipient"]) for m in sent] == [("backend", "frontend")]
    message_id = int(sent[0]["id"])
    # the tool's answer reached the model as the tool's result
    real.wait(
        lambda: real.seen.turns_showing("backend", f"message #{message_id} queued"), TURN, *both
    )
    real.wait(lambda: _delivered(real, message_id), TURN, *both)
    real.wait(lambda: real.seen.turns_showing("frontend", body), TURN, *both)
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, *both)
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, *both)

    calls(script, "MCP-HANDOVER", SEND, handover)
    real.type("backend", "MCP-HANDOVER: hand the list view over")
    pending = real.wait(lambda: real.rows("handovers"), TURN, *both)
    assert isinstance(pending, list)
    assert [(h["sender"], h["recipient"]) for h in pending] == [("backend", "frontend")]
    assert not real.seen.turns_showing("frontend", "mcp-ho-32")  # held for the operator
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, *both)

    calls(script, "MCP-TIMER", TIMER, timer)
    real.type("backend", "MCP-TIMER: keep an anchor")
    timers = real.wait(lambda: real.rows("timers"), TURN, *both)
    assert isinstance(timers, list)
    assert [(t["name"], t["intent"]) for t in timers] == [("backend", "anchor")]


def test_a_link_opened_and_closed_with_close_link_through_the_tools(
    real: RealRoom, script: Script
) -> None:
    ask = "Which fields does the list need? (mcp-q-41)"
    answer = "id, title and done (mcp-ans-42)"
    calls(script, "MCP-LINK", SEND, {"recipient": "@frontend", "text": ask, "link": True})
    script.add("mcp-q-41", Reply(answer))
    bye = {"recipient": "@frontend", "text": "Thanks, done (mcp-bye-43)", "close_link": True}
    real.start("backend", "frontend")
    both = ("backend", "frontend")

    real.type("backend", "MCP-LINK: ask frontend")
    links = real.wait(lambda: real.rows("links"), TURN, *both)
    assert isinstance(links, list)
    assert [(lk["initiator"], lk["responder"], lk["state"]) for lk in links] == [
        ("backend", "frontend", "open")
    ]
    real.wait(lambda: real.seen.turns_showing("backend", f"[From @frontend] {answer}"), TURN, *both)
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, *both)
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, *both)

    calls(script, "MCP-CLOSE", SEND, bye)
    real.type("backend", "MCP-CLOSE: close the link")
    real.wait(lambda: real.rows("links")[0]["state"] == "closed", TURN, *both)
    real.wait(lambda: real.seen.turns_showing("frontend", "mcp-bye-43"), TURN, *both)


def test_with_the_server_down_the_command_hooks_take_over(real: RealRoom, script: Script) -> None:
    """The agents' turn events go to the room's server over HTTP; when the server is not
    serving (here: a watch run without it), Claude Code lets the failed HTTP hook pass and
    the plugin's command hook handles the event: nothing is lost."""
    real.start("backend", "frontend")
    both = ("backend", "frontend")
    real.type("frontend", "first turn, served (srv-51)")
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, *both)

    assert real._watch is not None  # the watch the user runs, restarted without the server
    real._watch.send_signal(signal.SIGTERM)
    real._watch.wait(timeout=30)
    real.wait(lambda: serving_pid(str(real.room_home)) is None, TURN, *both)
    real._watch = subprocess.Popen(
        [sys.executable, "-m", "agent_room", "watch"],
        env={**real.env, "AGENT_ROOM_MCP": "off"},
        stdin=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    result = real.run("send", "@frontend", "while the server is down (down-52)", name="backend")
    assert result.code == 0, result.err
    message_id = int(result.out)
    real.wait(lambda: _delivered(real, message_id), TURN, *both)
    real.wait(lambda: real.seen.turns_showing("frontend", "down-52"), TURN, *both)
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, *both)
    room = real.open()
    try:
        session = str(room.store.holder("frontend")["session_id"])  # type: ignore[index]
        turns = room.store.turns(session)
    finally:
        room.close()
    assert all(t["stopped_at"] is not None for t in turns)  # every turn ended: Stop handled
    assert len(turns) == 2
