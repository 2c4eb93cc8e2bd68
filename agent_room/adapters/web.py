"""The console served to a web browser: textual-serve's server, made private.

textual-serve runs one console process per browser connection (the Textual web driver)
and relays its screen over a WebSocket. This adapter adds what a control room needs
around it: a token every request must carry unless the server listens on loopback only
(given once as ``?token=``, then kept in an HTTP-only, same-site cookie), addresses built
from the request (so a server on 0.0.0.0 works from another machine), a page that loads
nothing from outside (textual-serve's template asks a web font service; its own fonts
are shipped), and no request line with a token in any log.
"""

from __future__ import annotations

import hmac
import logging
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from aiohttp import web
from textual_serve.server import Server

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

COOKIE = "agent_room_token"
_OUTSIDE_FONTS = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*>", re.DOTALL)


def _template(name: str) -> str:
    """textual-serve's own template, without the link to the outside font service."""
    import textual_serve

    path = Path(textual_serve.__file__).parent / "templates" / name
    return _OUTSIDE_FONTS.sub("", path.read_text(encoding="utf-8"))


class RoomServer(Server):
    """textual-serve's ``Server`` with a token, request-built addresses and a quiet log."""

    def __init__(self, command: str, *, host: str, port: int, token: str | None) -> None:
        super().__init__(command, host=host, port=port, title="agent-room")
        self.token = token
        """What each request must carry; None on loopback without one."""

    def initialize_logging(self) -> None:
        """Problems only: aiohttp's access log would write request lines (and a token
        given in one) to the terminal."""
        logging.basicConfig(level=logging.WARNING, format="agent-room serve: %(message)s")
        logging.getLogger("aiohttp.access").setLevel(logging.ERROR)

    async def on_startup(self, app: web.Application) -> None:
        """Say where to point a browser (with the token, on this terminal only)."""
        del app
        where = f"http://{self.host}:{self.port}/"
        if self.token:
            where += f"?token={self.token}"
        print(f"agent-room: serving the console on {where} (Ctrl-C stops)", file=sys.stderr)
        sys.stderr.flush()

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        import aiohttp_jinja2

        aiohttp_jinja2.setup(app, loader=jinja2.FunctionLoader(_template))
        if self.token is not None:
            app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every request but the shipped static files carries the token."""
        assert self.token is not None
        if request.path.startswith("/static/"):
            return await handler(request)
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return web.Response(
                status=403,
                text="agent-room: a wrong or missing token: use the address serve printed\n",
            )
        response = await handler(request)
        if request.query.get("token") and not response.prepared:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    async def handle_index(self, request: web.Request) -> Any:
        """The page, with its addresses taken from the request (the host it was asked by)."""
        self.public_url = f"{request.scheme}://{request.host}"
        return await super().handle_index(request)
