"""After many pictures of the room, the console shows what a fresh console shows.

Every panel changes only what moved from one picture to the next (kept cells and lines,
titles set only when they change, rows moved rather than drawn again): a console that
was handed a stream of pictures must show, character for character, style for style and
mouse place for mouse place, what a console given only the last picture shows.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from rich.style import Style
from textual.pilot import Pilot

from agent_room.core.snapshot import (
    Edge,
    FlowEvent,
    HandoverRow,
    RoomSnapshot,
    SessionRow,
    TreeRow,
)
from agent_room.room.enter import Where
from agent_room.ui.app import RoomConsole, make_app
from agent_room.ui.settings import ConsoleSettings
from tests.fakes import FakeMux
from tests.ui.seed import AliveProbe

pytestmark = pytest.mark.anyio
T0 = 1_790_000_000.0
SIZE = (160, 48)


def _pictures(count: int) -> list[RoomSnapshot]:
    """A room where agents talk: each picture an event more in the flow (sent, delivered,
    read by turns, the earlier events of its message showing its new status), a turn
    starting or ending, unread counts and the traffic moving; a session joins, a
    subagent appears in the tree, a handover comes and is decided, and the ages tick;
    an event written late comes among those drawn, and one leaves from among them."""
    names = [f"agent{n:02d}" for n in range(12)]
    sessions = [
        SessionRow(
            name=name, session_id=f"s-{name}", agent="claude", state="idle",
            cwd=f"/srv/{name}", pane=f"%{n}", tmux_socket="/tmp/t", pid=100 + n,
            started_at=T0 - 600 * n,
        )
        for n, name in enumerate(names)
    ]  # fmt: skip
    counts: dict[tuple[str, str], int] = {(names[0], names[1]): 3}
    flow: list[FlowEvent] = []
    shots: list[RoomSnapshot] = []
    message = 0
    for picture in range(count):
        live = len(sessions)
        sender, recipient = picture % live, (picture * 5 + 1) % live
        if recipient == sender:
            recipient = (sender + 1) % live
        kind = ("sent", "delivered", "read")[picture % 3]
        if kind == "sent":
            message += 1
            counts[(sessions[sender].name, sessions[recipient].name)] = (
                counts.get((sessions[sender].name, sessions[recipient].name), 0) + 1
            )
        status = {"sent": "queued", "delivered": "delivered", "read": "read"}[kind]
        flow = [replace(e, status=status) if e.message_id == message else e for e in flow]
        flow.append(
            FlowEvent(
                id=picture + 1, at=T0 + picture * 7, kind=kind, message_id=message,
                message_kind="message", sender=sessions[sender].name,
                recipient=sessions[recipient].name, status=status,
                summary=f"step {message} of the plan: what the tests said",
            )
        )  # fmt: skip
        if picture % 7 == 3:  # an event written late, shown among those drawn
            flow.insert(len(flow) - 3, replace(flow[-1], id=1000 + picture, kind="retried"))
        flow = flow[-25:]
        if picture % 11 == 5:  # the oldest written left the window from among the rows
            del flow[len(flow) // 2]
        moved = sender if kind == "sent" else recipient
        state = "busy" if kind != "read" else ("waiting" if picture % 5 == 0 else "idle")
        sessions[moved] = replace(
            sessions[moved], state=state, unread=(sessions[moved].unread + 1) % 4
        )
        if picture == 12:
            sessions.append(replace(sessions[0], name="late", session_id="s-late", pid=999))
        tree = tuple(
            TreeRow(
                label=s.name, session_id=s.session_id, state=s.state, depth=0,
                children=(TreeRow("Explore", None, "busy", 1, kind="subagent"),)
                if s.name == "agent03" and picture >= 20
                else (),
            )
            for s in sessions
        )  # fmt: skip
        handovers = (
            (HandoverRow(7, names[2], names[4], "take over the parser", T0),)
            if 15 <= picture < 30
            else ()
        )
        shots.append(
            RoomSnapshot(
                taken_at=T0 + picture * 7, home="/room", sessions=tuple(sessions), tree=tree,
                handovers=handovers, flow=tuple(flow),
                traffic=tuple(Edge(a, b, c) for (a, b), c in sorted(counts.items())),
                messages=message, operator_unread=picture // 10,
            )
        )  # fmt: skip
    return shots


def _console(first: RoomSnapshot) -> RoomConsole:
    settings = ConsoleSettings(
        home="/room", live=False, watch=False, deliver=False, liveness=False, utc=True,
        theme_dirs=(),
    )  # fmt: skip
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    return make_app(settings, mux=FakeMux(), probe=AliveProbe(), where=where, snapshot=first)


def _cells(style: Style | None) -> tuple[object, ...]:
    if style is None:
        return ()
    return (style.without_color, style.color, style.bgcolor, style.meta.get("row"))


async def _screen(pilot: Pilot[int]) -> list[list[tuple[str, tuple[object, ...]]]]:
    """Every cell of the screen: its character, its look and its row for the mouse."""
    for _ in range(3):
        await pilot.pause(0.05)
    strips = pilot.app.screen._compositor.render_strips()
    return [
        [(char, _cells(segment.style)) for segment in strip for char in segment.text]
        for strip in strips
    ]


async def test_a_console_after_many_pictures_shows_what_a_fresh_one_shows() -> None:
    """Fed 40 pictures one by one (checked at the 20th and the last), each panel shows
    what a console started with only that picture shows."""
    pictures = _pictures(40)
    fed = _console(pictures[0])
    async with fed.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        seen = []
        for index, picture in enumerate(pictures[1:], start=1):
            fed.snapshot = picture
            await pilot.pause()
            if index in (20, len(pictures) - 1):
                seen.append((index, await _screen(pilot)))
    for index, screen in seen:
        fresh = _console(pictures[index])
        async with fresh.run_test(size=SIZE) as pilot:
            await pilot.pause(0.2)
            expected = await _screen(pilot)
        for y, (line, want) in enumerate(zip(screen, expected, strict=True)):
            assert line == want, f"picture {index}, line {y}"
