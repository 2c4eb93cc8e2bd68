"""The console served to a web browser: textual-serve's server, made the operator's alone.

textual-serve runs one console process per browser connection (the Textual web driver)
and relays its screen over a WebSocket; left as it is, any page the operator visits could
open that WebSocket from its own origin and read and type into the console, and any other
user of the machine could open the page. So, on every address (loopback included):

- a per-run **token** opens the door once: ``/?token=...`` is exchanged for a session
  cookie (HttpOnly, SameSite=Strict: never sent by another site's page) and answered with
  a redirect to an address without the token (and ``Referrer-Policy: no-referrer`` on
  every response), so the token stays out of the address bar, the history and any
  Referer; a token the server made is spent by that first exchange;
- **Host** must name this server: an IP literal, ``localhost`` or a name the operator
  allowed, so a DNS name rebound to the loopback is refused; the page's own addresses
  are relative, the Host is never copied into them;
- **Origin**, when a browser sends one (it always does on a WebSocket), must be this
  very Host: a page of another origin cannot open the console's WebSocket;
- at most ``max_consoles`` console processes at once (each WebSocket starts one): the
  next WebSocket is refused before anything starts;
- each console is started directly (no shell between), in a process group of its own,
  and ended with the server: asked to quit, then signalled, on SIGTERM or SIGINT too,
  whether or not a browser is connected;
- no request line is logged, and the page loads nothing from outside (textual-serve's
  template asks a web font service; its own fonts are shipped).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import re
import secrets
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp_jinja2
import jinja2
import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

COOKIE = "agent_room_session"
"""The session cookie a token is exchanged for (its value is not the token)."""
DEFAULT_MAX_CONSOLES = 4
"""Console processes at once unless told otherwise: a few tabs or devices of one operator."""
QUIT_GRACE = 3.0
"""Seconds a console is given to quit when asked before its process group is signalled."""
SECURITY_HEADERS = {
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
"""On every response: no address of the room leaks as a Referer, no other page frames it."""
_OUTSIDE_FONTS = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*>", re.DOTALL)

log = logging.getLogger("agent-room.serve")


def _template(name: str) -> str:
    """textual-serve's own template, without the link to the outside font service."""
    path = Path(textual_serve.__file__).parent / "templates" / name
    return _OUTSIDE_FONTS.sub("", path.read_text(encoding="utf-8"))


def host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port (and an IPv6 literal's brackets)."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def host_allowed(host_header: str, allowed: Iterable[str]) -> bool:
    """Whether a request's ``Host`` names this server: an IP literal (a rebound DNS name
    never is one), ``localhost``, or a name the operator allowed. Any port: an SSH tunnel
    or a proxy may forward from another."""
    name = host_name(host_header)
    if not name:
        return False
    if name == "localhost" or name in {a.lower() for a in allowed}:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def origin_allowed(origin: str | None, host_header: str) -> bool:
    """Whether ``Origin`` (if the browser sent one) is the page's own: this very Host."""
    if origin is None:
        return True
    scheme, sep, rest = origin.partition("://")
    return bool(sep) and scheme in ("http", "https") and rest.lower() == host_header.lower()


class ConsoleProcess(AppService):
    """One browser's console: textual-serve's app service, started without a shell (one
    process, not two) in a process group of its own, and ended for sure."""

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        super().__init__(shlex.join(argv), **kwargs)
        self.argv = argv

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        """The console's process (textual-serve's runs ``command`` through a shell)."""
        environment = self._build_environment(width=width, height=height)
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,
        )
        self._process = process
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def end(self, grace: float = QUIT_GRACE) -> None:
        """Ask the console to quit; signal its process group if it has not within
        ``grace`` seconds (SIGTERM, then SIGKILL); wait for it."""
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(Exception):  # its stdin may be closed already
                await self.send_meta({"type": "quit"})
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, sig)
                try:
                    await asyncio.wait_for(process.wait(), grace)
                    break
                except TimeoutError:
                    continue
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, grace)
            self._task = None


class RoomServer(Server):
    """textual-serve's ``Server``, private to the operator (see the module's docstring)."""

    def __init__(
        self,
        argv: list[str],
        *,
        host: str,
        port: int,
        token: str,
        token_made: bool,
        allowed_hosts: Iterable[str] = (),
        max_consoles: int = DEFAULT_MAX_CONSOLES,
    ) -> None:
        super().__init__(shlex.join(argv), host=host, port=port, title="agent-room")
        self.argv = argv
        self.token = token
        """The per-run secret a browser opens the door with."""
        self.token_made = token_made
        """Made by this server (printed once, spent by its first use), not the
        environment's (the operator's own, good for the whole run)."""
        self.spent = False
        self.session = secrets.token_urlsafe(32)
        """The cookie's value: the token itself never sits in a browser's cookie jar."""
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.max_consoles = max_consoles
        self.consoles: set[ConsoleProcess] = set()
        self.sockets: set[web.WebSocketResponse] = set()

    def initialize_logging(self) -> None:
        """Problems only: aiohttp's access log would write request lines (and a token
        given in one) to the terminal."""
        logging.basicConfig(level=logging.WARNING, format="agent-room serve: %(message)s")
        logging.getLogger("aiohttp.access").setLevel(logging.CRITICAL)

    def serve(self, debug: bool = False) -> None:
        """Serve until SIGINT or SIGTERM, then end every console started."""
        self.debug = debug
        self.initialize_logging()
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=lambda *_: None,
            access_log=None,
            shutdown_timeout=QUIT_GRACE * 3,
        )

    async def on_startup(self, app: web.Application) -> None:
        """Say where to point a browser: the address on standard error; a token this
        server made, once, as a link on standard output (never the environment's)."""
        del app
        where = f"http://{self.host}:{self.port}/"
        if self.token_made:
            print(
                f"agent-room: serving the console on {where} (Ctrl-C stops);"
                " open the one-time link printed on standard output",
                file=sys.stderr,
                flush=True,
            )
            print(f"{where}?token={self.token}", flush=True)
        else:
            print(
                f"agent-room: serving the console on {where} (Ctrl-C stops);"
                f" open {where}?token=<your AGENT_ROOM_SERVE_TOKEN>",
                file=sys.stderr,
                flush=True,
            )

    async def on_shutdown(self, app: web.Application) -> None:
        """End every console and close every browser's WebSocket."""
        del app
        await asyncio.gather(*(console.end() for console in list(self.consoles)))
        for websocket in list(self.sockets):
            with contextlib.suppress(Exception):
                await websocket.close(code=1001, message=b"agent-room serve stopped")

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        aiohttp_jinja2.setup(app, loader=jinja2.FunctionLoader(_template))
        app.middlewares.append(self._guard)
        app.on_response_prepare.append(self._headers)
        return app

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        del request
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Host and Origin on every request; then the token's exchange, or the cookie."""
        host = request.headers.get("Host", "")
        if not host_allowed(host, self.allowed_hosts):
            return _refused(421, "this server does not answer to that host name (--allow-host)")
        origin = request.headers.get("Origin")
        if not origin_allowed(origin, host) or (request.path == "/ws" and origin is None):
            return _refused(403, "a page of another origin may not use the console")
        if request.path.startswith("/static/"):
            return await handler(request)  # textual-serve's own scripts, styles and fonts
        given = request.query.get("token")
        if given is not None:
            return self._exchange(request, given)
        cookie = request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(cookie.encode(), self.session.encode()):
            return _refused(403, "open the link agent-room serve printed (or your token's)")
        return await handler(request)

    def _exchange(self, request: web.Request, given: str) -> web.StreamResponse:
        """A right token: the cookie, and the same address without the token."""
        right = hmac.compare_digest(given.encode(), self.token.encode())
        if not right or (self.token_made and self.spent):
            return _refused(403, "a wrong or spent token: use the address serve printed")
        self.spent = True
        query = request.rel_url.query.copy()
        query.popall("token")
        location = request.rel_url.with_query(query).path_qs  # relative: no Host in it
        response = web.Response(status=303, headers={"Location": location})  # See Other
        response.set_cookie(
            COOKIE, self.session, httponly=True, samesite="Strict", path="/", secure=request.secure
        )
        return response

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page, its addresses relative to wherever the browser found it (never
        built from the request's Host)."""
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": "/ws",
            "config": {"static": {"url": "/static/"}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One browser's console, within the limit; ended when the browser goes."""
        if len(self.consoles) >= self.max_consoles:
            return _refused(  # type: ignore[return-value]
                503, f"{self.max_consoles} consoles are open already (--max-consoles)"
            )
        websocket = web.WebSocketResponse(heartbeat=15)
        console = ConsoleProcess(
            self.argv,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        self.consoles.add(console)  # before any wait: concurrent handshakes count it
        self.sockets.add(websocket)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        try:
            await websocket.prepare(request)
            await console.start(width, height)
            await self._relay(websocket, console)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as exc:  # noqa: BLE001 - one browser's fault ends its console only
            log.warning("a console connection failed: %s", exc)
        finally:
            await console.end()
            self.consoles.discard(console)
            self.sockets.discard(websocket)
        return websocket

    async def _relay(self, websocket: web.WebSocketResponse, console: ConsoleProcess) -> None:
        """The browser's keys, size and focus to the console (textual-serve's envelope)."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = message.json()
                kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            except (ValueError, TypeError, IndexError, KeyError):
                continue
            if kind == "stdin" and isinstance(data, str):
                await console.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await console.set_terminal_size(
                    to_int(str(data.get("width")), 80), to_int(str(data.get("height")), 24)
                )
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await console.blur()
            elif kind == "focus":
                await console.focus()


def _refused(status: int, why: str) -> web.Response:
    return web.Response(status=status, text=f"agent-room: {why}\n")
