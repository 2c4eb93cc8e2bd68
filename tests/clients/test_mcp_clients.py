"""Codex CLI and Gemini CLI calling the room's tools over MCP: ``start`` gives each its
server (the room's address, a secret of its own) without touching the user's config, and
the model's tool calls send, hand over, open and close a link and set a timer."""

from __future__ import annotations

import json
import time
from typing import Any

from agent_room.demo.client_api import StandIn
from tests.clients.conftest import ClientRoom


def tool(name: str, **args: Any) -> str:
    """The prompt on which the stand-in model calls the room's tool ``name``."""
    return f"RUNTOOL: {name} {json.dumps(args)}"


def test_the_model_uses_the_rooms_tools(clients: ClientRoom, standin: StandIn, kind: str) -> None:
    assert clients.run("join", "lead").code == 0
    clients.start("worker", kind)
    idle = lambda: clients.member("worker").get("state") == "idle"  # noqa: E731

    clients.type("worker", tool("send_message", recipient="@lead", text="over MCP (mcp-c-1)"))
    clients.wait(lambda: clients.member("lead").get("unread") == 1, 60, "worker")
    inbox = json.loads(clients.run("inbox", "--json", name="lead").out)
    assert [(m["sender"], m["body"]) for m in inbox] == [("worker", "over MCP (mcp-c-1)")]
    clients.wait(lambda: standin.saw("queued for @lead"), 30, "worker")  # the tool's answer
    clients.wait(idle, 60, "worker")

    handover = tool(
        "send_message", recipient="@lead", text="notes", handover=True, changed="api", todo="x"
    )
    clients.type("worker", handover)
    clients.wait(lambda: clients.rows("handovers"), 60, "worker")
    assert [(h["sender"], h["recipient"]) for h in clients.rows("handovers")] == [
        ("worker", "lead")
    ]
    clients.wait(idle, 60, "worker")

    clients.type("worker", tool("set_timer", intent="anchor", duration="10m", text="back"))
    clients.wait(lambda: clients.rows("timers"), 60, "worker")
    assert [(t["name"], t["intent"]) for t in clients.rows("timers")] == [("worker", "anchor")]


def quiet(clients: ClientRoom) -> bool:
    """Both agents idle with nothing waiting for them, twice a second apart."""

    def now() -> bool:
        who = clients.who()
        return all(
            who.get(n, {}).get("state") == "idle" and not who.get(n, {}).get("unread")
            for n in ("worker", "peer")
        )

    if not now():
        return False
    time.sleep(1.0)
    return now()


def test_a_link_opened_and_closed_with_close_link(
    clients: ClientRoom, standin: StandIn, kind: str
) -> None:
    clients.start("peer", kind)  # a link joins two agent sessions
    clients.start("worker", kind)
    clients.type("peer", "say hello")  # (a Codex agent registers with its first prompt)
    clients.type("worker", tool("send_message", recipient="@peer", text="linked", link=True))
    clients.wait(lambda: clients.rows("links"), 60, "worker", "peer")
    link = clients.rows("links")[0]
    assert (link["initiator"], link["responder"], link["state"]) == ("worker", "peer", "open")
    # the stand-ins answer every crossing: the exchange runs until the breaker freezes it;
    # the close is typed once both are quiet (a nudge typed meanwhile would join the line)
    clients.wait(lambda: quiet(clients), 120, "worker", "peer")
    bye = tool("send_message", recipient="@peer", text="bye (mcp-c-2)", close_link=True)
    clients.type("worker", bye)
    clients.wait(lambda: clients.rows("links")[0]["state"] == "closed", 60, "worker", "peer")
    clients.wait(lambda: standin.saw("is closed"), 30, "worker")  # the tool's answer
