"""The room's MCP tools, called as a client calls them: in process over the SDK's own
client (stdio identity, from the environment) and over HTTP with per-session secrets.

Each tool goes through the room service the command line uses, so these check what the
tool adds: who the caller is (never an argument), the answers, and errors as tool errors."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from agent_room.mcp.serve import Serving
from agent_room.mcp.server import Identity, build_server
from agent_room.mcp.tools import Rooms
from agent_room.room.access import mint, read_token, reserve_port, url
from agent_room.room.service import Room
from agent_room.room.views import timer_views
from agent_room.turn.core.errors import RoomGone
from tests.room.conftest import register


@pytest.fixture
def members(room: Room) -> Room:
    for name in ("alpha", "beta", "gamma"):
        register(room, name)
    return room


def call(environ: dict[str, str], tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """One tool call over the SDK's in-process client, as the agent of ``environ``."""

    async def run() -> tuple[bool, str]:
        async with Client(build_server(Identity(environ))) as client:
            result = await client.call_tool(tool, args)
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            return bool(result.is_error), str(text)

    return asyncio.run(run())


def env_of(room_home: Path, name: str) -> dict[str, str]:
    return {"AGENT_ROOM_HOME": str(room_home), "AGENT_ROOM_NAME": name}


def test_the_tools_are_listed(room_home: Path, members: Room) -> None:
    async def run() -> list[str]:
        async with Client(build_server(Identity(env_of(room_home, "alpha")))) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    names = asyncio.run(run())
    assert names == ["send_message", "read_inbox", "who", "get_session_data", "set_timer", "ask"]


def test_send_message_queues_from_the_served_agent(room_home: Path, members: Room) -> None:
    error, text = call(
        env_of(room_home, "alpha"), "send_message", {"recipient": "@beta", "text": "hi"}
    )
    assert not error
    assert "queued for @beta" in text
    (row,) = members.store.unread("beta")
    assert (row["sender"], row["body"]) == ("alpha", "hi")
    error, text = call(env_of(room_home, "beta"), "read_inbox", {})
    assert not error
    assert "hi" in text
    assert "from: alpha" in text
    assert members.store.unread("beta") == []


def test_errors_are_tool_errors_with_the_command_lines_words(
    room_home: Path, members: Room
) -> None:
    env = env_of(room_home, "alpha")
    error, text = call(env, "send_message", {"recipient": "@nobody", "text": "hi"})
    assert error
    assert "nobody named @nobody is in the room" in text
    error, text = call(env, "send_message", {"recipient": "@beta", "text": " "})
    assert error
    assert "no message body" in text
    error, text = call(env, "send_message", {"recipient": "@beta", "text": "x", "todo": "t"})
    assert error
    assert "need --handover" in text
    error, text = call(env, "set_timer", {"intent": "later", "duration": "5m", "text": "x"})
    assert error
    assert members.store.unread("beta") == []


def test_a_handover_waits_for_the_operator(room_home: Path, members: Room) -> None:
    args = {
        "recipient": "@beta",
        "text": "notes",
        "handover": True,
        "changed": "api",
        "todo": "adapt",
    }
    error, text = call(env_of(room_home, "alpha"), "send_message", args)
    assert not error
    assert "waiting for approval" in text
    (pending,) = members.pending_handovers()
    assert (pending["sender"], pending["recipient"]) == ("alpha", "beta")


def test_a_link_opens_and_close_link_severs_it(room_home: Path, members: Room) -> None:
    alpha, beta = env_of(room_home, "alpha"), env_of(room_home, "beta")
    error, text = call(alpha, "send_message", {"recipient": "@beta", "text": "go", "link": True})
    assert not error
    assert "(opened;" in text
    error, text = call(
        beta, "send_message", {"recipient": "@alpha", "text": "bye", "close_link": True}
    )
    assert error
    assert "initiator" in text
    error, text = call(
        alpha, "send_message", {"recipient": "@beta", "text": "done", "close_link": True}
    )
    assert not error
    assert "is closed" in text
    error, text = call(
        alpha, "send_message", {"recipient": "@beta", "text": "x", "close_link": True}
    )
    assert error
    assert "no open link" in text


def test_get_session_data_follows_peeks_rules(room_home: Path, members: Room) -> None:
    error, text = call(env_of(room_home, "alpha"), "get_session_data", {"name": "beta"})
    assert error
    assert "has no open link to @beta" in text


def test_a_timer_is_the_callers(room_home: Path, members: Room) -> None:
    args = {"intent": "anchor", "duration": "5m", "text": "back to the parser"}
    error, text = call(env_of(room_home, "gamma"), "set_timer", args)
    assert not error
    assert "for @gamma fires in 5m" in text
    (timer,) = timer_views(members)
    assert timer.name == "gamma"


def test_who_lists_the_room(room_home: Path, members: Room) -> None:
    error, text = call(env_of(room_home, "alpha"), "who", {})
    assert not error
    assert {row["name"] for row in json.loads(text)} == {"alpha", "beta", "gamma"}


def test_ask_without_a_client_is_refused(room_home: Path, members: Room) -> None:
    error, text = call(env_of(room_home, "alpha"), "ask", {"repo": ".", "question": "why?"})
    assert error
    assert "agent-room ask" in text


# -- over HTTP: one server, a secret per agent ---------------------------------------------


def post(port: int, token: str | None, message: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url(port), json.dumps(message).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
            return response.status, json.loads(body) if body else {}
    except urllib.error.HTTPError as exc:
        return exc.code, {}


def send_call(recipient: str, text: str) -> dict[str, Any]:
    args = {"recipient": recipient, "text": text}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "send_message", "arguments": args},
    }


def test_over_http_the_secret_names_the_sender(
    room_home: Path, served: Serving, members: Room
) -> None:
    assert served.port is not None
    alpha = read_token(mint(str(room_home), "alpha"))
    gamma = read_token(mint(str(room_home), "gamma"))
    status, answer = post(served.port, alpha, send_call("@beta", "from alpha"))
    assert status == 200
    assert not answer["result"]["isError"]
    status, answer = post(served.port, gamma, send_call("@beta", "from gamma"))
    assert status == 200
    assert [(m["sender"], m["body"]) for m in members.store.unread("beta")] == [
        ("alpha", "from alpha"),
        ("gamma", "from gamma"),
    ]


def test_over_http_without_a_known_secret_nothing_is_served(
    room_home: Path, served: Serving, members: Room
) -> None:
    assert served.port is not None
    old = read_token(mint(str(room_home), "alpha"))
    read_token(mint(str(room_home), "alpha"))  # a new start: the old secret is void
    for token in (None, "guessed", old):
        status, _ = post(served.port, token, send_call("@beta", "forged"))
        assert status == 401
    assert members.store.unread("beta") == []


def test_a_second_server_stands_by_on_the_rooms_port(room_home: Path, served: Serving) -> None:
    stop = threading.Event()
    other = Serving(str(room_home), {"AGENT_ROOM_HOME": str(room_home)})
    thread = other.start(stop)
    assert not other.serving.wait(1.5)
    stop.set()
    thread.join(timeout=10)


def test_a_room_removed_under_the_server_is_not_made_anew(tmp_path: Path) -> None:
    """The server's first connection makes the room if needed; once it has used one, a
    thread that opens it again after its removal meets ``RoomGone`` and makes nothing."""
    home = tmp_path / "room"
    rooms = Rooms({"AGENT_ROOM_HOME": str(home)})
    rooms.get()  # this thread's: the room is made
    rooms.drop()
    assert (home / "room.db").exists()
    shutil.rmtree(home)
    with pytest.raises(RoomGone):
        rooms.get()
    with pytest.raises(RoomGone):
        reserve_port(str(home))  # the server's address, kept in the room
    assert not home.exists()
