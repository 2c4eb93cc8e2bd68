"""``agent-room mcp`` on stdio: a relay on the standard library to the room's server when
the agent has its secret, and a server of its own for the agent's environment otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_room.mcp.serve import Serving
from agent_room.room.access import mint, read_token, url
from agent_room.room.service import Room
from tests.room.conftest import register

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def converse(env: dict[str, str], *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """The answers of ``agent-room mcp`` to ``messages`` (one JSON-RPC line each); stdin
    stays open until every request is answered, as a client keeps it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_room", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    answers: list[dict[str, Any]] = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return answers


def send(text: str) -> dict[str, Any]:
    args = {"recipient": "@beta", "text": text}
    params = {"name": "send_message", "arguments": args}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}


def test_the_relay_carries_calls_to_the_rooms_server(
    room_home: Path, served: Serving, room: Room
) -> None:
    register(room, "alpha")
    register(room, "beta")
    assert served.port is not None
    token = read_token(mint(str(room_home), "alpha"))
    assert token is not None
    env = {
        **os.environ,
        "AGENT_ROOM_HOME": str(room_home),
        "AGENT_ROOM_MCP_URL": url(served.port),
        "AGENT_ROOM_MCP_TOKEN": token,
        "AGENT_ROOM_NAME": "beta",  # not believed over the secret: the secret names alpha
    }
    answers = converse(env, INIT, INITIALIZED, send("relayed (relay-1)"))
    assert [a["id"] for a in answers] == [1, 2]  # the notification has no answer
    assert not answers[1]["result"]["isError"]
    (row,) = room.store.unread("beta")
    assert (row["sender"], row["body"]) == ("alpha", "relayed (relay-1)")


def test_without_a_server_it_serves_the_agent_of_its_environment(
    room_home: Path, room: Room
) -> None:
    register(room, "alpha")
    register(room, "beta")
    env = {**os.environ, "AGENT_ROOM_HOME": str(room_home), "AGENT_ROOM_NAME": "alpha"}
    env.pop("AGENT_ROOM_MCP_TOKEN", None)
    answers = converse(env, INIT, INITIALIZED, send("served here (relay-2)"))
    assert answers[-1]["id"] == 2
    assert not answers[-1]["result"]["isError"]
    (row,) = room.store.unread("beta")
    assert (row["sender"], row["body"]) == ("alpha", "served here (relay-2)")


def test_the_relay_loads_the_standard_library_only() -> None:
    code = (
        "import sys, agent_room.mcp.relay;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " {'mcp', 'pydantic', 'starlette', 'uvicorn', 'anyio', 'httpx'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
