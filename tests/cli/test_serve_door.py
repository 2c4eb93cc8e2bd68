"""The served console's door, without a browser: ``RoomServer`` answers plain HTTP and
WebSocket requests in this process (aiohttp's test server), so a door that lets a wrong
token, no cookie, a made-up cookie, another Host or another Origin in fails here, not
only in the browser tier.

No console process is started: the WebSocket tests run a server allowed no consoles,
so a request the door lets through is answered 503 by the limit, one it keeps out 403.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from agent_room.adapters.web import COOKIE, RoomServer

TOKEN = "the-operators-token-0123456789"
WRONG = "not-the-token-0123456789abcdef"
HOST = {"Host": "127.0.0.1:8760"}
WEBSOCKET = {
    **HOST,
    "Origin": "http://127.0.0.1:8760",
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}

Client = TestClient[web.Request, web.Application]


def _at_the_door(
    check: Callable[[RoomServer, Client], Awaitable[None]],
    *,
    made: bool = False,
) -> None:
    """Run ``check`` against a server of the operator's token (or one it made)."""
    server = RoomServer(
        ["true"], host="127.0.0.1", port=8760, token=TOKEN, token_made=made, max_consoles=0
    )

    async def run() -> None:
        async with TestClient(TestServer(await server._make_app())) as client:
            await check(server, client)

    asyncio.run(run())


async def _status(client: Client, path: str, **headers: str) -> int:
    async with client.get(path, headers={**HOST, **headers}, allow_redirects=False) as answer:
        return answer.status


@pytest.mark.parametrize("path", ["/", "/ws"])
def test_no_token_and_no_cookie_is_refused(path: str) -> None:
    async def check(server: RoomServer, client: Client) -> None:
        del server
        headers = WEBSOCKET if path == "/ws" else HOST
        assert await _status(client, path, **headers) == 403

    _at_the_door(check)


def test_a_wrong_token_is_refused_and_the_right_one_becomes_the_cookie() -> None:
    async def check(server: RoomServer, client: Client) -> None:
        assert await _status(client, f"/?token={WRONG}") == 403
        assert await _status(client, "/?token=") == 403
        assert await _status(client, f"/?token={TOKEN}x") == 403
        assert not client.session.cookie_jar.filter_cookies(client.make_url("/"))
        async with client.get(
            f"/?token={TOKEN}&fontsize=18", headers=HOST, allow_redirects=False
        ) as answer:
            assert answer.status == 303
            assert answer.headers["Location"] == "/?fontsize=18"  # the token left behind
            cookie = answer.cookies[COOKIE]
            assert cookie.value == server.session
            assert cookie.value != TOKEN
        assert await _status(client, "/") == 200  # the cookie opens the page
        assert await _status(client, f"/?token={TOKEN}") == 303  # the operator's: all run

    _at_the_door(check)


def test_a_made_token_opens_the_door_once() -> None:
    async def check(server: RoomServer, client: Client) -> None:
        del server
        assert await _status(client, f"/?token={TOKEN}") == 303
        client.session.cookie_jar.clear()
        assert await _status(client, f"/?token={TOKEN}") == 403  # spent
        assert await _status(client, "/") == 403

    _at_the_door(check, made=True)


def test_a_made_up_cookie_is_refused_and_the_servers_own_passes() -> None:
    async def check(server: RoomServer, client: Client) -> None:
        for value in ("", TOKEN, WRONG, server.session + "x"):
            client.session.cookie_jar.update_cookies({COOKIE: value})
            assert await _status(client, "/") == 403, value
            assert await _status(client, "/ws", **WEBSOCKET) == 403, value
        client.session.cookie_jar.update_cookies({COOKIE: server.session})
        assert await _status(client, "/") == 200
        assert await _status(client, "/ws", **WEBSOCKET) == 503  # past the door: the limit

    _at_the_door(check)


def test_a_foreign_host_or_origin_is_refused_even_with_the_cookie_or_the_token() -> None:
    """DNS rebinding (another name for this address) and a page of another origin: the
    door looks at Host and Origin before the token or the cookie."""
    rebound = {"Host": "rebound.example:8760"}

    async def check(server: RoomServer, client: Client) -> None:
        del server
        assert await _status(client, f"/?token={TOKEN}", **rebound) == 421
        assert not client.session.cookie_jar.filter_cookies(client.make_url("/"))
        assert await _status(client, f"/?token={TOKEN}") == 303  # a made token: not spent
        assert await _status(client, "/") == 200
        assert await _status(client, "/", **rebound) == 421
        assert await _status(client, "/ws", **{**WEBSOCKET, **rebound}) == 421
        for origin in ("http://127.0.0.1:9999", "http://rebound.example:8760", "null"):
            assert await _status(client, "/", Origin=origin) == 403, origin
            assert await _status(client, "/ws", **{**WEBSOCKET, "Origin": origin}) == 403, origin
        no_origin = {k: v for k, v in WEBSOCKET.items() if k != "Origin"}
        assert await _status(client, "/ws", **no_origin) == 403  # a WebSocket names its page
        assert await _status(client, "/ws", **WEBSOCKET) == 503  # past the door: the limit

    _at_the_door(check, made=True)
