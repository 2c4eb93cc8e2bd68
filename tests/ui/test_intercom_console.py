"""The console's tree shows each intercom session under the session that asked."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_room.adapters.claude import Run
from agent_room.room.intercom import Asker, Intercom
from agent_room.room.service import Room
from agent_room.ui.app import RoomConsole
from agent_room.ui.widgets.tree import SessionTree
from tests.ui.conftest import until
from tests.ui.seed import FrozenClock

SIZE = (160, 48)
pytestmark = pytest.mark.anyio


class OneAnswer:
    """A client that answers once, in a new session."""

    def run(
        self, cwd: str, prompt: str, *, resume: str | None, max_turns: int, timeout: float
    ) -> Run:
        answer = {"session_id": "ask-1", "result": "ok", "total_cost_usd": 0.25, "num_turns": 3}
        return Run(0, json.dumps(answer), "")


async def test_an_intercom_session_hangs_under_its_asker(
    console: Callable[..., RoomConsole], seeded: tuple[Room, FrozenClock], tmp_path: Path
) -> None:
    room, _clock = seeded
    backend = room.store.holder("backend")
    assert backend is not None
    repo = tmp_path / "billing"
    repo.mkdir()
    Intercom(room, OneAnswer()).ask(
        str(repo),
        "How are invoices numbered?",
        Asker(backend["session_id"], "backend"),
        timeout=60,
    )
    app = console()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.main.query_one("#tree", SessionTree)

        def shown() -> list[str]:
            return (
                [str(n.label) for n in tree.root.children[0].children] if tree.root.children else []
            )

        await until(pilot, lambda: any("ask @billing" in label for label in shown()))
        label = next(label for label in shown() if "ask @billing" in label)
        assert label == "⇢ ask @billing: How are invoices numbered? ($0.2500, 3 turns)"
