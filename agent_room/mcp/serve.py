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
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from agent_room.adapters.procfs import read_stat
from agent_room.mcp.server import Identity, build_server
from agent_room.mcp.tokens import Tokens, bearer, folder, write_private
from agent_room.mcp.tools import ClientFactory

ADDRESS = "address"
"""``mcp/address``: ``127.0.0.1:PORT``, the room's MCP address (kept across restarts)."""
SERVING = "serving"
"""``mcp/serving``: ``PID START_TICKS`` of the process serving now (removed when it stops)."""
HOST = "127.0.0.1"
PATH = "/mcp"
RETRY = 5.0
"""Seconds between tries while the room's port is held by another process."""
LOOPBACK = frozenset({"127.0.0.1", "::1"})

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def read_port(home: str) -> int | None:
    """The room's MCP port, if one was reserved."""
    try:
        host, _, port = (folder(home) / ADDRESS).read_text("ascii").strip().rpartition(":")
    except (OSError, UnicodeDecodeError):
        return None
    return int(port) if host == HOST and port.isdigit() and 0 < int(port) < 65536 else None


def reserve_port(home: str) -> int:
    """The room's MCP port: the one recorded, else a free one, recorded now."""
    port = read_port(home)
    if port is not None:
        return port
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port = int(probe.getsockname()[1])
    write_private(folder(home) / ADDRESS, f"{HOST}:{port}\n")
    return port


def url(port: int) -> str:
    """The MCP address agents are given."""
    return f"http://{HOST}:{port}{PATH}"


def serving_pid(home: str) -> int | None:
    """The process serving the room's tools now, if it is alive (the one that wrote it)."""
    from agent_room.adapters.procfs import is_alive

    try:
        words = (folder(home) / SERVING).read_text("ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(words) != 2 or not all(w.isdigit() for w in words):
        return None
    pid, start = int(words[0]), int(words[1])
    return pid if is_alive(pid, start) else None


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


def build_app(home: str, environ: dict[str, str], ask_client: ClientFactory | None) -> App:
    """The room's HTTP app: the MCP endpoint behind the guard."""
    tokens = Tokens(home)
    server = build_server(Identity(environ, tokens), ask_client)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{HOST}:*", "localhost:*"],
        allowed_origins=[f"http://{HOST}:*", "http://localhost:*"],
    )
    app = server.streamable_http_app(
        streamable_http_path=PATH,
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
        self._server: uvicorn.Server | None = None
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
        while not stop.is_set():
            try:
                sock = self._bind()
            except OSError:
                sock = None
            if sock is None:
                stop.wait(RETRY)
                continue
            try:
                self._serve(sock, stop)
            finally:
                sock.close()
            stop.wait(1.0)  # (a server that ended on its own is started again)

    def _serve(self, sock: socket.socket, stop: threading.Event) -> None:
        app = build_app(self.home, self.environ, self.ask_client)
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", access_log=False, timeout_keep_alive=60
        )
        server = uvicorn.Server(config)
        self._server = server

        def end_on_stop() -> None:
            stop.wait()
            server.should_exit = True

        watcher = threading.Thread(target=end_on_stop, name="agent-room-mcp-stop", daemon=True)
        watcher.start()
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
