"""One process serves the room's tools to every agent: MCP's streamable HTTP on loopback.

``watch`` (the background deliverer that ``start`` launches, or one the operator runs)
hosts it in a thread, so fifty agents do not mean fifty servers. The address is the
room's (``mcp/address``, ``127.0.0.1:PORT``): ``start`` reserves a port before the first
server runs, so that the agents it launches know where to call, and a server that
restarts binds the same port again. While another process holds that port (another
watch of the room), this one stands by and tries again.

Every request must come from loopback and carry an agent's secret (``tokens``): anything
else is answered 401 before the SDK sees it; the SDK's own check refuses a Host header
that is not loopback (DNS rebinding). The server runs stateless (each POST answered in
its own JSON response), which keeps it small and makes a relay of a few lines possible.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response

from agent_room.mcp.hooks_http import HOOKS_PATH, HookEndpoint
from agent_room.mcp.server import Identity, build_server
from agent_room.mcp.tools import ClientFactory, Rooms
from agent_room.room.access import (
    HOST,
    MCP_PATH,
    SERVING,
    Tokens,
    bearer,
    folder,
    reserve_port,
    serving_pid,
    write_private,
)
from agent_room.turn.procfs import read_stat

RETRY = 5.0
"""Seconds between tries while the room's port is held by another process."""
LOOPBACK = frozenset({"127.0.0.1", "::1"})

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard:
    """ASGI middleware: loopback peers with an agent's secret only; 401 otherwise."""

    def __init__(self, app: App, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = bearer(headers.get("authorization"))
        if not client or client[0] not in LOOPBACK or self.tokens.name_of(token) is None:
            body = json.dumps({"error": "an agent's secret of this room is required"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


HTTP_HOOK_WAIT = 1.0
"""How long a statement of an HTTP hook waits for a busy room. Claude Code gives the
hook 5 s (``room.access.http_hooks``) and then goes on without its answer: a Stop that
handed messages over after that would have marked them delivered to a model that never
saw them. Failing early instead logs the Stop as lost, and the healer takes over."""


def build_app(home: str, environ: dict[str, str], ask_client: ClientFactory | None) -> App:
    """The room's HTTP app behind the guard: the MCP endpoint and Claude Code's hooks."""
    tokens = Tokens(home)
    rooms = Rooms(environ)
    server = build_server(Identity(environ, tokens), ask_client, rooms)
    endpoint = HookEndpoint(home, tokens, Rooms(environ, timeout=HTTP_HOOK_WAIT))

    async def hooks(request: Request) -> Response:
        return await endpoint(request)

    server.custom_route(HOOKS_PATH, methods=["POST"])(hooks)

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{HOST}:*", "localhost:*"],
        allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
    )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
    )
    return Guard(app, tokens)


class Serving:
    """The room's MCP server in a thread of the hosting process (``watch``)."""

    def __init__(
        self, home: str, environ: dict[str, str], ask_client: ClientFactory | None = None
    ) -> None:
        self.home = home
        self.environ = {**environ, "AGENT_ROOM_HOME": home}
        self.ask_client = ask_client
        self.port: int | None = None
        self._thread: threading.Thread | None = None
        self.serving = threading.Event()
        """Set while this process serves the room's port."""

    def start(self, stop: threading.Event) -> threading.Thread:
        """Serve until ``stop`` is set (standing by while the port is taken)."""
        self._thread = threading.Thread(
            target=self._run, args=(stop,), name="agent-room-mcp", daemon=True
        )
        self._thread.start()
        return self._thread

    def _bind(self) -> socket.socket | None:
        port = reserve_port(self.home)
        # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto
        # says TCP, and accepted sockets inherit it; without it each answer waits ~40 ms
        # for the client's delayed ACK (Nagle)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                return None
            raise
        sock.listen(128)
        self.port = port
        return sock

    def _run(self, stop: threading.Event) -> None:
        """Serve, stand by or retry until stopped: a passing fault (the room busy or being
        restored, the port taken) is said once and tried again, never the thread's end."""
        said = ""
        while not stop.wait(0) and Path(self.home).is_dir():  # (a removed room: not made again)
            try:
                sock = self._bind()
                if sock is not None:
                    try:
                        self._serve(sock, stop)
                    finally:
                        sock.close()
            except Exception as exc:  # noqa: BLE001 - the server must outlive a passing fault
                if str(exc) != said:
                    said = str(exc)
                    print(f"agent-room: the room's MCP server: {exc}", file=sys.stderr, flush=True)
            stop.wait(RETRY if not self.serving.is_set() else 1.0)

    def _serve(self, sock: socket.socket, stop: threading.Event) -> None:
        app = build_app(self.home, self.environ, self.ask_client)
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", access_log=False, timeout_keep_alive=60
        )
        server = _Server(config, stop)
        stat = read_stat(os.getpid())
        path = folder(self.home) / SERVING
        write_private(path, f"{os.getpid()} {stat.start_ticks if stat else 0}\n")
        self.serving.set()
        try:
            asyncio.run(server.serve(sockets=[sock]))
        finally:
            self.serving.clear()
            if serving_pid(self.home) in (os.getpid(), None):
                with contextlib.suppress(OSError):
                    path.unlink()


class _Server(uvicorn.Server):
    """uvicorn's server, woken only by requests and by ``stop``: its own main loop ticks
    ten times a second to look for a signal, which would be most of the room's CPU at
    rest (the Date header it refreshes stays the start's: nobody reads it)."""

    def __init__(self, config: uvicorn.Config, stop: threading.Event) -> None:
        super().__init__(config)
        self.stop = stop

    async def main_loop(self) -> None:
        await self.on_tick(0)
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def end_on_stop() -> None:
            self.stop.wait()
            loop.call_soon_threadsafe(done.set)

        threading.Thread(target=end_on_stop, name="agent-room-mcp-stop", daemon=True).start()
        await done.wait()
