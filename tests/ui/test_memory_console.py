"""The room's memory in the console: `c` lists the selected session's checkpoints and `f`
resumes one through ``agent-room resume``; the palette settles entity conflicts; the
handover preview shows the context prepared from the sender's transcript."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from agent_room.room.checkpoints import Checkpoints
from agent_room.room.service import Room
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.ui.app import RoomConsole
from agent_room.ui.screens.checkpoints import CheckpointsScreen
from tests.ui.conftest import select_session, until

SIZE = (160, 48)
pytestmark = pytest.mark.anyio


async def test_c_lists_checkpoints_and_f_resumes_one(
    console: Callable[..., RoomConsole], room_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = Room(SqliteStore(room_home))
    first = Checkpoints(room).take_named("frontend", note="before lunch")
    second = Checkpoints(room).take_named("frontend")
    room.close()
    ran: list[list[str]] = []

    def fake_run(argv: list[str], **_kwargs: Any) -> subprocess.CompletedProcess[str]:
        ran.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await select_session(pilot, "frontend")
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, CheckpointsScreen))
        listed = app.screen.query_one("#checkpoints", DataTable)
        assert listed.row_count == 2
        assert listed.get_row_at(0)[0] == f"#{second}"
        assert listed.get_row_at(1)[3] == "before lunch"
        name = app.screen.query_one("#new-name", Input).value
        assert name == "frontend-2"  # the session runs: the new agent needs another name
        await pilot.press("down", "f")
        await until(pilot, lambda: ran)
    assert ran[0][-7:] == [
        "resume",
        f"#{first}",
        "--mode",
        "full",
        "--name",
        "frontend-2",
        "--detach",
    ]


async def test_entity_conflicts_are_settled_from_the_palette(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    from agent_room.core.entities import Mention
    from agent_room.room.entities import Entities
    from agent_room.ui.screens.conflicts import ConflictsScreen
    from tests.ui.conftest import run_from_palette

    room = Room(SqliteStore(room_home))
    entities = Entities(room, strategy="manual")
    billing = entities.mention(
        Mention("service", "billing", "charges cards"), agent="api", source="t"
    )
    entities.mention(Mention("service", "billing", "sends invoices"), agent="web", source="t")
    entities.mention(Mention("tool", "Redis", "a cache"), agent="api", source="t")
    entities.mention(Mention("tool", "Redis", "the queue"), agent="web", source="t")
    room.close()
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        await run_from_palette(pilot, "Entity conflicts")
        await until(pilot, lambda: isinstance(app.screen, ConflictsScreen))
        assert app.screen.query_one("#conflicts", DataTable).row_count == 2
        await pilot.press("t")  # the first: billing takes "sends invoices"
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, ConflictsScreen)
                and app.screen.query_one("#conflicts", DataTable).row_count == 1
            ),
        )
        await pilot.press("k")  # Redis keeps "a cache"
        await until(pilot, lambda: not isinstance(app.screen, ConflictsScreen))
    room = Room(SqliteStore(room_home))
    try:
        entities = Entities(room)
        assert entities.conflicts() == []
        assert entities.find(f"#{billing}")["context"] == "sends invoices"
        assert entities.find("Redis")["context"] == "a cache"
    finally:
        room.close()


async def test_the_preview_shows_the_context_before_approval(
    console: Callable[..., RoomConsole], room_home: Path
) -> None:
    from agent_room.core.memory import Context
    from agent_room.store import memory
    from agent_room.ui.widgets.handovers import HandoverPreview, HandoverQueue

    room = Room(SqliteStore(room_home))
    pending = [int(r["message_id"]) for r in room.store.pending_handovers()]
    text = "## Context from @api's session\n\n### Files changed\n- api/orders_total_7q.py\n"
    memory.save_context(
        room.store,
        pending[0],
        session_id="sess-api",
        context=Context(text, 20, 1, 1),
        problem=None,
        at=0.0,
    )
    room.close()
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        queue = app.main.query_one("#queue", HandoverQueue)
        await until(pilot, lambda: pending[0] in [r.id for r in queue.rows])
        queue.highlighted = [r.id for r in queue.rows].index(pending[0])
        preview = app.main.query_one(HandoverPreview)
        await until(pilot, lambda: preview.handover is not None and preview.handover.context)
        await pilot.pause()
        preview.scroll_end(animate=False)  # the context comes below the handover's body
        await until(pilot, lambda: "orders_total_7q" in _screen_text(app))
        queue.highlighted = [r.id for r in queue.rows].index(pending[1])
        await until(pilot, lambda: preview.handover is not None and not preview.handover.context)
        await pilot.pause()
        preview.scroll_end(animate=False)
        await until(pilot, lambda: "transcript: preparing" in _screen_text(app))


def _screen_text(app: RoomConsole) -> str:
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)
