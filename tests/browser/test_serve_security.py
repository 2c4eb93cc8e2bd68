"""The served console is the operator's alone: driven in Debian's Chromium by Playwright.

A page of another origin (another port of the loopback too: the same site, so the
SameSite cookie alone would not stop it) can neither read the console nor type into it;
a DNS name rebound to the loopback is refused; the one-time link becomes a cookie and
leaves the address bar; twenty WebSockets never start more consoles than the limit; and
SIGTERM or SIGINT with a browser connected ends serve and every console it started.
"""

from __future__ import annotations

import http.server
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from agent_room.adapters.web import COOKIE, DEFAULT_MAX_CONSOLES
from agent_room.room.service import Room
from tests.browser.conftest import (
    CHROMIUM,
    FLAGS,
    Screen,
    Served,
    alive,
    require_chromium,
    status,
)
from tests.poll import wait_for

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

REBOUND = "rebind.test"
"""A DNS name Chromium resolves to the loopback, as a rebinding attacker's would."""


@pytest.fixture
def browser() -> Iterator[Browser]:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        made = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                *FLAGS,
                f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1, MAP attacker.test 127.0.0.1",
            ],
        )
        try:
            yield made
        finally:
            made.close()


@pytest.fixture
def served(serve: Callable[..., Served]) -> Served:
    """serve as the operator starts it: no token given, so it makes one and prints it."""
    return serve()


def _log_in(page: Page, served: Served) -> Screen:
    screen = Screen(page)
    page.goto(served.link())
    screen.shows("@api", "@web", "1 pending handover")
    return screen


ATTACK = """
window.result = {opened: false, frames: 0, closed: false, read: null};
const ws = new WebSocket("ws://127.0.0.1:%(port)d/ws?width=160&height=50");
ws.onopen = () => { window.result.opened = true; ws.send(JSON.stringify(["stdin", "a"])); };
ws.onmessage = () => { window.result.frames += 1; ws.send(JSON.stringify(["stdin", "a"])); };
ws.onclose = () => { window.result.closed = true; };
fetch("http://127.0.0.1:%(port)d/", {credentials: "include"})
  .then((r) => r.text()).then((t) => { window.result.read = t; })
  .catch(() => { window.result.read = "blocked"; });
"""


@pytest.fixture
def attacker() -> Iterator[tuple[int, list[str]]]:
    """Another web server on the loopback, serving whatever page is put in its list (a
    real server: Chromium lets a page on the loopback reach the loopback)."""
    page: list[str] = [""]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page[0].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield int(server.server_address[1]), page
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("where", ["127.0.0.1", "attacker.test"])
def test_a_page_of_another_origin_can_neither_read_nor_type(
    browser: Browser,
    served: Served,
    room: Room,
    handover: int,
    attacker: tuple[int, list[str]],
    where: str,
) -> None:
    """From another port of the loopback (the same site: its cookie goes along) and from
    another site, a page tries to read the console and type into it."""
    context = browser.new_context()
    page = context.new_page()
    _log_in(page, served)  # the operator's browser holds the session cookie
    page.goto("about:blank")  # the operator's console closes; the cookie stays
    wait_for(lambda: served.consoles() == [], timeout=30)
    port, content = attacker
    script = ATTACK % {"port": int(served.base.rsplit(":", 1)[1].strip("/"))}
    content[0] = f"<html><body><script>{script}</script></body></html>"
    page.goto(f"http://{where}:{port}/page")
    page.wait_for_function(
        "(window.result.closed || window.result.frames > 0) && window.result.read !== null",
        timeout=20000,
    )
    page.wait_for_timeout(1000)
    result: dict[str, Any] = page.evaluate("window.result")
    assert result["opened"] is False
    assert result["frames"] == 0
    assert result["read"] == "blocked"
    assert served.consoles() == []  # nothing started for it
    row = room.store.handover(handover)
    assert row is not None
    assert row["state"] == "pending"  # no key of it reached a console
    asked = served.err.read_text()
    assert "Traceback" not in asked
    context.close()


def test_a_wrong_host_is_refused_even_with_the_cookie(browser: Browser, served: Served) -> None:
    context = browser.new_context()
    page = context.new_page()
    link = served.link()
    port = int(served.base.rsplit(":", 1)[1].strip("/"))
    rebound = page.goto(link.replace("127.0.0.1", REBOUND))  # DNS rebinding, as a page does it
    assert rebound is not None
    assert rebound.status == 421
    assert REBOUND not in rebound.text()
    _log_in(page, served)  # the link was not spent by the refused request
    (cookie,) = context.cookies()
    headers = {"Cookie": f"{COOKIE}={cookie['value']}"}
    assert status(served.base, headers) == 200
    assert status(served.base, {**headers, "Host": f"evil.example:{port}"}) == 421
    assert status(served.base + "ws", {**headers, "Host": f"{REBOUND}:{port}"}) == 421
    context.close()


def test_the_one_time_link_becomes_a_cookie_and_leaves_the_address_bar(
    browser: Browser, served: Served, handover: int
) -> None:
    link = served.link()
    token = link.split("token=", 1)[1]
    context = browser.new_context()
    page = context.new_page()
    answers: list[tuple[str, int, dict[str, str]]] = []
    page.on("response", lambda r: answers.append((r.url, r.status, r.headers)))
    screen = _log_in(page, served)
    assert page.url == served.base  # no token in the address bar, nor in the history
    html = page.content()
    assert 'data-session-websocket-url="/ws"' in html  # relative: no Host copied into it
    assert "127.0.0.1" not in html
    assert token not in page.evaluate("location.href + document.referrer")
    assert page.evaluate("document.cookie") == ""  # HttpOnly: no script of the page reads it
    (cookie,) = context.cookies()
    assert cookie["name"] == COOKIE
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert token not in cookie["value"]
    (exchange,) = [a for a in answers if "token=" in a[0]]
    assert exchange[1] == 303
    assert exchange[2]["location"] == "/"
    assert all(a[2].get("referrer-policy") == "no-referrer" for a in answers if a[1] != 101)
    page.click(".textual-terminal")
    page.keyboard.press("a")
    screen.shows(f"Handover #{handover} approved.")  # the console works on the cookie
    other = browser.new_context().new_page()
    spent = other.goto(link)
    assert spent is not None
    assert spent.status == 403  # one time: a copy of the link in a history opens nothing
    assert served.out.read_text().count(token) == 1  # printed once, on standard output
    assert token not in served.err.read_text()
    context.close()


def test_twenty_websockets_never_start_more_consoles_than_the_limit(
    browser: Browser, served: Served
) -> None:
    page = browser.new_context().new_page()
    _log_in(page, served)
    page.evaluate(
        """() => {
        window.opened = 0; window.refused = 0;
        for (let i = 0; i < 20; i++) {
          const ws = new WebSocket("/ws?width=80&height=24");
          ws.onopen = () => { window.opened += 1; };
          ws.onerror = () => { window.refused += 1; };
        }
    }"""
    )
    most = 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        most = max(most, len(served.consoles()))
        page.wait_for_timeout(50)
    counts = page.evaluate("[window.opened, window.refused]")
    assert most <= DEFAULT_MAX_CONSOLES, f"{most} consoles at once"
    assert counts == [DEFAULT_MAX_CONSOLES - 1, 20 - DEFAULT_MAX_CONSOLES + 1], json.dumps(counts)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_serve_and_every_console_with_a_browser_connected(
    browser: Browser, served: Served, sig: int
) -> None:
    page = browser.new_context().new_page()
    _log_in(page, served)
    consoles = served.consoles()
    assert len(consoles) == 1
    took = served.stop(sig)
    assert took < 15, "serve did not end on the signal"
    wait_for(lambda: not any(alive(pid) for pid in consoles), timeout=5)


def test_a_token_from_the_environment_is_never_printed(serve: Callable[..., Served]) -> None:
    token = "the-operators-own-token-0123"
    running = serve(env={"AGENT_ROOM_SERVE_TOKEN": token})

    def said() -> str:
        return running.err.read_text() + running.out.read_text()

    wait_for(lambda: "serving the console on" in said(), timeout=10)
    assert token not in said()
    assert status(f"{running.base}?token={token}") == 303  # it opens the door all the same
    running.stop()
    assert token not in said()
