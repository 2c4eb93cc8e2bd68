"""``agent-room mcp``: the room's tools on stdio, for a client that starts its servers.

Where the room's process serves (``watch``, see ``serve``) and the agent has its secret
(``AGENT_ROOM_MCP_TOKEN``, ``AGENT_ROOM_MCP_URL``), this process is a thin relay: each
JSON-RPC line on stdin is POSTed to the room's server and its answer written back, on
the standard library alone, so that it starts fast and stays small. Otherwise it serves
the tools itself over stdio, for the one agent whose environment it runs in (identified
as the command line identifies it).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
import urllib.parse
from collections.abc import Mapping
from typing import IO

ENV_TOKEN = "AGENT_ROOM_MCP_TOKEN"  # noqa: S105 - a variable's name
ENV_URL = "AGENT_ROOM_MCP_URL"
TIMEOUT = 900.0
"""Seconds a call may take (an ``ask`` runs a client for up to ten minutes)."""


class Relay:
    """One keep-alive connection to the room's server, reopened when it drops."""

    def __init__(self, url: str, token: str) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or parts.hostname not in {"127.0.0.1", "localhost"}:
            raise ValueError(f"the room's MCP address must be on loopback: {url}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.path = parts.path or "/"
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        }
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
            conn.connect()
            assert conn.sock is not None
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conn = conn
        return self._conn

    def post(self, line: bytes) -> tuple[int, bytes]:
        """POST one message; (status, body). Retried once on a dropped keep-alive."""
        for attempt in (1, 2):
            try:
                conn = self._connection()
                conn.request("POST", self.path, body=line, headers=self.headers)
                response = conn.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def reachable(self) -> bool:
        """Whether the room's server answers at all."""
        try:
            self._connection()
        except OSError:
            return False
        return True


def _error(line: bytes, message: str) -> bytes | None:
    """A JSON-RPC error answering ``line`` (None for a notification, which has no answer)."""
    try:
        request = json.loads(line)
    except ValueError:
        request = None
    if not isinstance(request, dict) or "id" not in request:
        return None
    answer = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32000, "message": message}}
    return json.dumps(answer).encode()


def relay(relay: Relay, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Carry lines until stdin ends."""
    for raw in stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            status, body = relay.post(line)
        except (OSError, http.client.HTTPException) as exc:
            out = _error(line, f"the room's server is unreachable: {exc}")
        else:
            if status == 202 or (status == 200 and not body.strip()):
                continue
            out = (
                body.strip() if status == 200 else _error(line, f"the room's server said {status}")
            )
        if out is not None:
            stdout.write(out + b"\n")
            stdout.flush()
    return 0


def main(environ: Mapping[str, str]) -> int:
    """Relay to the room's server if it serves this agent, else serve on stdio."""
    token, url = environ.get(ENV_TOKEN), environ.get(ENV_URL)
    if token and url:
        try:
            carrier = Relay(url, token)
        except ValueError as exc:
            print(f"agent-room: {exc}", file=sys.stderr)
            return 2
        if carrier.reachable():
            return relay(carrier, sys.stdin.buffer, sys.stdout.buffer)
    # the MCP SDK (pydantic, anyio) loads only for a server of its own: a relay is
    # started for every agent, on the standard library alone
    from agent_room.mcp.stdio import serve_stdio  # noqa: PLC0415 - see above

    return serve_stdio(dict(os.environ))
