"""The console draws hostile text escaped: nothing it puts on the screen steers a terminal.

A seeded room gets a message, a handover and a session whose text carries what a
terminal acts on (OSC retitle, clear screen, CR, C1, bidi), including Markdown entities
that only become control characters once rendered. The test reads every cell the screen
composes and checks that the escaped forms are drawn and the characters themselves are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from agent_room.core.enums import SessionState
from agent_room.room.service import Room
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.ui.app import RoomConsole
from agent_room.ui.screens.modals import ConfirmScreen
from agent_room.ui.widgets.handovers import HandoverPreview, HandoverQueue
from agent_room.ui.widgets.sessions import SessionsTable
from tests.ui.conftest import until
from tests.ui.seed import LIVE_PID, AliveProbe, FrozenClock

SIZE = (160, 48)
pytestmark = pytest.mark.anyio

ACTED_ON = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
)
CHAT = "\x1b[2J\x9b\u202e end\nsecond\rline"
HANDOVER = (
    "## Plan \x1b]2;t\x07 now\n\n"
    "- raw \x1b[2J and \u2066iso\u2069\n"
    "- entities &#27;[2J and &rlm; and &#x9b;\n"
    "- [a link](https://example.com/&#27;x)\n"
)
CWD = "/srv/\x1b]2;t\x07/\u202ex"


def _screen(app: RoomConsole) -> tuple[str, list[str]]:
    """Every cell the screen composes, as text lines, and the links it carries."""
    strips = app.screen._compositor.render_strips()
    text = "\n".join("".join(seg.text for seg in strip) for strip in strips)
    links = [s.style.link for strip in strips for s in strip if s.style and s.style.link]
    return text, links


def _assert_safe(app: RoomConsole) -> str:
    text, links = _screen(app)
    assert not ACTED_ON.search(text.replace("\n", "")), text
    for link in links:
        assert not ACTED_ON.search(link), link
    return text


@pytest.fixture
def hostile(seeded: tuple[Room, FrozenClock]) -> int:
    room, clock = seeded
    registry = Registry(room, AliveProbe())
    registry.register(
        SessionFacts(
            session_id="sess-mallory",
            cwd=CWD,
            transcript_path=None,
            pid=LIVE_PID,
            pid_start=100,
            pane="%9",
            tmux_socket="/tmp/tmux-1000/default",
            name="mallory",
            parent_hint=None,
        )
    )
    room.store.start_turn(  # a turn: the ended session can be resumed (a dialog asks)
        "sess-mallory", prompt_id=None, kind="human", prompt="go", at=clock.now
    )
    registry.set_state("sess-mallory", SessionState.ENDED)
    clock.advance(5)
    room.send("mallory", "frontend", CHAT)
    clock.advance(5)
    return room.send_handover("mallory", "backend", body=HANDOVER)


async def _show_handover(app: RoomConsole, pilot: Pilot[int], handover_id: int) -> None:
    queue = app.main.query_one("#queue", HandoverQueue)
    await until(pilot, lambda: handover_id in [r.id for r in queue.rows])
    queue.highlighted = [r.id for r in queue.rows].index(handover_id)
    preview = app.main.query_one(HandoverPreview)
    await until(pilot, lambda: preview.handover is not None and preview.handover.id == handover_id)
    await until(pilot, lambda: "entities" in _screen(app)[0])


async def test_flow_preview_and_sessions_draw_escapes(
    console: Callable[..., RoomConsole], hostile: int
) -> None:
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await _show_handover(app, pilot, hostile)
        flow_row = "\\x1b[2J\\x9b\\u202e end"
        await until(pilot, lambda: flow_row in _screen(app)[0])  # the flow drawn too
        text = _assert_safe(app)
        assert flow_row in text  # the flow
        assert "Plan \\x1b]2;t\\x07 now" in text
        assert "raw \\x1b[2J and \\u2066iso\\u2069" in text
        assert " and \\u200f and " in text  # &rlm; decoded by Markdown, escaped after
        # the cwd column is fitted to the panel: its end (…) is what shows
        assert "]2;t\\x07/\\u202ex  " in text


async def test_notifications_and_dialogs_draw_escapes(
    console: Callable[..., RoomConsole], hostile: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    del hostile
    monkeypatch.setenv("AGENT_ROOM_CLAUDE", "/opt/claude/bin/claude")
    app = console()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.notify("cannot read /tmp/\x1b[2Jx\u202e [bold]y", title="t\x9bz")
        await until(pilot, lambda: "cannot read" in _screen(app)[0])
        text = _assert_safe(app)
        assert "cannot read /tmp/\\x1b[2Jx\\u202e [bold]y" in text
        assert "t\\x9bz" in text
        table = app.main.query_one("#sessions", SessionsTable)
        await until(pilot, lambda: "mallory" in [r.name for r in table.shown])
        table.focus()
        table.select_name("mallory")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        assert "/srv/\\x1b]2;t\\x07/\\u202ex" in _assert_safe(app)
