"""Codex's and Gemini CLI's states show what their pane shows: a client in a dialog of its
own before its first prompt is ``waiting`` (with the pid ``start`` began), nothing is
typed into it, and a restarted agent is not shown as the ended one with its old pid."""

from __future__ import annotations

import os
import time

from agent_room.demo.client_api import StandIn
from tests.clients.conftest import KEY_SETTLE, READY, STARTUP, ClientRoom, client_binary
from tests.conftest import require_tool


def _codex(clients: ClientRoom) -> None:
    binary = client_binary("codex")
    require_tool(binary.is_file() and os.access(binary, os.X_OK), f"codex at {binary}")
    assert clients.run("join", "lead").code == 0


def test_codex_in_its_model_upgrade_offer_is_waiting_and_gets_nothing_typed(
    release: str, clients: ClientRoom, standin: StandIn
) -> None:
    del release  # (pinned and newest: chosen before the room)
    _codex(clients)
    config = clients.home / ".codex" / "config.toml"  # a user still on an older model
    config.write_text(config.read_text().replace('"stand-in-model"', '"gpt-5.5"', 1))
    (clients.root / "worker").mkdir()
    started = clients.run(
        "start", "worker", "--agent", "codex", "--cwd", str(clients.root / "worker"), "--detach"
    )
    assert started.code == 0, started.err
    clients.wait(lambda: "1. Try new model" in clients.screen("worker"), STARTUP, "worker")
    clients.wait(lambda: clients.member("worker").get("state") == "waiting", 30, "worker")
    row = clients.member("worker")
    assert row["pid"]  # the process start began, known before any hook
    early = clients.send("lead", "worker", "sent while the offer is open EARLY-BODY")
    time.sleep(3)  # the deliverer has looked
    assert clients.message(early)["status"] == "queued"
    assert "[agent-room]" not in clients.screen("worker")  # the offer was not answered
    assert "1. Try new model" in clients.screen("worker")

    clients.keys("worker", "2")  # the user keeps the model: the prompt shows
    clients.wait(lambda: READY["codex"] in clients.screen("worker"), 30, "worker")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 30, "worker")
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.message(early)["status"] == "delivered", 60, "worker")
    clients.wait(lambda: standin.saw("EARLY-BODY"), 30, "worker")


def test_a_restarted_codex_is_not_shown_as_the_ended_one(release: str, clients: ClientRoom) -> None:
    del release  # (pinned and newest: chosen before the room)
    _codex(clients)
    clients.start("worker", "codex")
    clients.type("worker", "say hello")
    clients.wait(lambda: clients.member("worker").get("state") == "idle", 60, "worker")
    first = clients.member("worker")
    clients.keys("worker", "-l", "/quit")
    time.sleep(KEY_SETTLE)
    clients.keys("worker", "Enter")
    clients.wait(lambda: clients.member("worker").get("state") == "ended", 60, "worker")
    clients.wait(lambda: clients.server.cmd("has-session", "-t", "=ac-worker").returncode != 0, 30)

    (clients.root / "worker").rename(clients.root / "worker-1")
    clients.start("worker", "codex")
    again = clients.member("worker")
    assert again["state"] == "idle"
    assert again["pid"]
    assert again["pid"] != first["pid"]
    assert again["session_id"] != first["session_id"]
    clients.type("worker", "say hello again")
    clients.wait(lambda: clients.member("worker").get("session_id"), 60, "worker")
    assert clients.member("worker")["session_id"] != first["session_id"]
