"""The console served to a web browser (``agent-room serve``), driven in a real headless
Chromium (Debian's package) by Playwright: the sessions appear, a key press approves the
pending handover, and the room records it; a request without the token is refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.browser.conftest import CHROMIUM, FLAGS, Screen, Served, require_chromium, status

pytestmark = pytest.mark.browser

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture
def served(serve: Callable[..., Served]) -> Iterator[str]:
    """``agent-room serve`` with the operator's own token; its base address."""
    running = serve(env={"AGENT_ROOM_SERVE_TOKEN": TOKEN})
    yield running.base
    running.stop()
    assert TOKEN not in running.err.read_text() + running.out.read_text()  # never printed


def test_a_request_without_the_right_token_is_refused(served: str) -> None:
    assert status(served) == 403
    assert status(served + "?token=wrong-token-0123456789") == 403
    assert status(served + f"?token={TOKEN}") == 303  # exchanged for the cookie
    assert status(served + f"?token={TOKEN}") == 303  # the operator's own: for the whole run


def test_the_served_console_approves_a_handover_from_a_browser(
    served: str, room: Room, handover: int, tmp_path: Path
) -> None:
    require_chromium()
    from playwright.sync_api import sync_playwright

    hid = handover
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            screen = Screen(page)
            asked: list[str] = []
            page.on("request", lambda request: asked.append(request.url))
            page.goto(served + f"?token={TOKEN}")
            screen.shows("@api", "@web", "1 pending handover", "Build the list view")
            page.click(".textual-terminal")
            page.keyboard.press("a")
            screen.shows(f"Handover #{hid} approved.")
            page.screenshot(path=str(tmp_path / "served.png"))
            outside = [u for u in asked if not u.startswith(served.replace("http", "ws", 1))]
            assert [u for u in outside if not u.startswith(served)] == []  # nothing from outside
        finally:
            browser.close()
    row = room.store.handover(hid)
    assert row is not None
    assert row["state"] == "approved"
    assert row["decided_by"] == "operator"
