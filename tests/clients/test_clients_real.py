"""Codex CLI and Gemini CLI in the room as fully as Claude Code, each run for real in tmux
against the stand-in: registered from the first prompt, idle / busy / waiting / ended from
their own hooks, messages nudged and receipted (the model reads the bodies), handed over
at the end of a busy turn, held while a permission dialog is open, and sent by the agent
itself with ``agent-room send``."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from agent_room.demo.client_api import StandIn
from tests.clients.conftest import KEY_SETTLE, READY, ClientRoom, client_binary
from tests.conftest import require_tool
from tests.real.test_enter_resume import Terminal


def test_an_agent_registers_and_follows_its_turns(clients: ClientRoom, kind: str) -> None:
    clients.start("worker", kind)
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")
    row = clients.member("worker")
    assert row["agent"] == kind
    assert row["pane"].startswith("%")
    assert [t["output"] for t in clients.turns("worker")] == ["PONG: say hello"]

    clients.type("worker", "SLOWREPLY then stop")
    assert clients.member("worker")["state"] == "busy"
    clients.keys("worker", "Escape")  # Codex: Interrupt; Gemini: a cancelled AfterAgent
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 30, "worker")
    last = clients.turns("worker")[-1]
    assert last["failed"]
    assert last["output"] is None

    clients.wait(lambda: READY[kind] in clients.screen("worker"), 30, "worker")
    clients.keys("worker", "-l", "/quit")
    time.sleep(KEY_SETTLE)
    clients.keys("worker", "Enter")
    clients.wait(lambda: clients.member("worker").get("state") == "ended", 60, "worker")


def test_messages_reach_the_agent_idle_or_busy(
    clients: ClientRoom, standin: StandIn, kind: str
) -> None:
    assert clients.run("join", "lead").code == 0
    clients.start("worker", kind)
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")

    first = clients.send("lead", "worker", "the schema is in docs/IDLE-BODY-1.md")
    nudge = f"[agent-room] 1 new message from @lead (#{first})"
    clients.wait(lambda: clients.message(first)["status"] == "delivered", 60, "worker")
    assert nudge in clients.screen("worker")  # typed into the pane, and submitted
    assert clients.message(first)["via"] == "nudge"  # receipted by its own hook
    clients.wait(lambda: standin.saw("IDLE-BODY-1"), 30, "worker")  # the hook handed it over

    clients.type("worker", "SLOWREPLY work a while")
    second = clients.send("lead", "worker", "also BUSY-BODY-2")
    clients.wait(lambda: clients.message(second)["status"] == "delivered", 60, "worker")
    assert clients.message(second)["via"] == "stop"  # at the end of the busy turn
    clients.wait(lambda: standin.saw("BUSY-BODY-2"), 30, "worker")  # the turn goes on with it
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")

    clients.type("worker", 'RUNSHELL: agent-room send @lead "done FROM-THE-AGENT"')
    clients.wait(lambda: clients.member("lead").get("unread") == 1, 60, "worker")
    inbox = json.loads(clients.run("inbox", "--json", name="lead").out)
    assert [(m["sender"], m["body"]) for m in inbox] == [("worker", "done FROM-THE-AGENT")]


def test_a_permission_dialog_holds_delivery(clients: ClientRoom, kind: str) -> None:
    assert clients.run("join", "lead").code == 0
    clients.start("worker", kind)
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")

    clients.type("worker", "RUNESC: echo approved > held.txt")
    clients.wait(lambda: clients.member("worker").get("state") == "waiting", 60, "worker")
    held = clients.send("lead", "worker", "while the dialog is open HELD-BODY")
    time.sleep(3)  # the deliverer has looked (it runs on every change)
    assert clients.message(held)["status"] == "queued"
    assert "[agent-room]" not in clients.screen("worker")  # nothing typed into the dialog

    clients.keys("worker", "y" if kind == "codex" else "Enter")  # allow once
    clients.wait(lambda: clients.message(held)["status"] == "delivered", 60, "worker")
    assert (clients.root / "worker" / "held.txt").read_text().strip() == "approved"


def test_enter_resumes_an_ended_session(
    clients: ClientRoom, standin: StandIn, kind: str, tmp_path: Path
) -> None:
    clients.start("worker", kind)
    clients.type("worker", "remember RESUME-MARK")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")
    session = clients.member("worker")["session_id"]
    clients.keys("worker", "-l", "/quit")
    time.sleep(KEY_SETTLE)
    clients.keys("worker", "Enter")
    clients.wait(lambda: clients.member("worker").get("state") == "ended", 60, "worker")

    enter = [sys.executable, "-m", "agent_room", "enter", "worker"]
    terminal = Terminal(enter, clients.env, tmp_path / "enter.err")
    try:
        pane = "=ar-worker:"  # the resumed client's own tmux session
        clients.wait(lambda: READY[kind] in clients.screen(pane), 60, pane)
        # in the room again before its first prompt (Codex's hooks hear of it only then):
        # another enter switches to this pane instead of starting a second writer
        clients.wait(lambda: clients.member("worker").get("state") == "idle", 30, pane)
        resumed = clients.server.cmd("display-message", "-p", "-t", pane, "#{pane_id}")
        assert clients.member("worker")["pane"] == resumed.stdout[0]
        clients.type("worker", "what did I say", target=pane)
        clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, pane)
        assert clients.member("worker")["session_id"] == session  # the same conversation
        assert any(
            "RESUME-MARK" in json.dumps(r.body) and "what did I say" in json.dumps(r.body)
            for r in standin.requests
        )  # the model got the old turns with the new prompt
    finally:
        terminal.close()


def test_a_half_typed_line_is_cleared_before_a_nudge(clients: ClientRoom, kind: str) -> None:
    assert clients.run("join", "lead").code == 0
    clients.start("worker", kind)
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")
    clients.keys("worker", "-l", "half typed by the user")
    clients.wait(lambda: "half typed by the user" in clients.screen("worker"), 30, "worker")

    sent = clients.send("lead", "worker", "a message")
    clients.wait(lambda: clients.message(sent)["status"] == "delivered", 60, "worker")
    nudge = f"[agent-room] 1 new message from @lead (#{sent})"
    assert clients.turns("worker")[-1]["prompt"] == nudge  # submitted alone


def test_a_message_to_codex_before_its_first_prompt_waits_for_it(
    clients: ClientRoom, standin: StandIn
) -> None:
    """Codex registers at its first prompt; until then its name is held by its pane, so
    a message waits (it is never typed into the pane before the agent is registered)."""
    binary = client_binary("codex")
    require_tool(binary.is_file() and os.access(binary, os.X_OK), f"codex at {binary}")
    assert clients.run("join", "lead").code == 0
    clients.start("worker", "codex")
    assert clients.member("worker")["agent"] == "codex"
    early = clients.send("lead", "worker", "sent before any prompt EARLY-BODY")
    time.sleep(2)
    assert clients.message(early)["status"] == "queued"
    assert "[agent-room]" not in clients.screen("worker")

    clients.type("worker", "say hello")
    clients.wait(lambda: clients.message(early)["status"] == "delivered", 60, "worker")
    clients.wait(lambda: standin.saw("EARLY-BODY"), 30, "worker")
    assert clients.member("worker")["session_id"]  # the hook took the name over
