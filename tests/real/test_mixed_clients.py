"""A link between a real Claude Code agent and a real Codex CLI agent: each one's final
output crosses to the other, framed, through the same hooks."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_room.demo.client_api import StandIn
from agent_room.demo.model_api import Reply, Script
from tests.clients.conftest import KEY_SETTLE, READY, client_binary
from tests.conftest import require_tool
from tests.real.conftest import STARTUP, TURN, RealRoom

ASK = "Which fields does the task list need? (q-81)"
THANKS = "Thanks, the list is live (back-83)."


@pytest.fixture
def codex_api() -> Iterator[StandIn]:
    binary = client_binary("codex")
    require_tool(binary.is_file() and os.access(binary, os.X_OK), f"codex at {binary}")
    with StandIn() as api:
        yield api


def _links(real: RealRoom) -> list[dict[str, Any]]:
    return real.rows("links")


def test_a_link_crosses_between_claude_code_and_codex(
    real: RealRoom, script: Script, codex_api: StandIn
) -> None:
    codex = real.home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(
        'model = "stand-in-model"\nmodel_provider = "standin"\n\n[model_providers.standin]\n'
        f'name = "Stand-in"\nbase_url = "{codex_api.url}/v1"\n'
        'env_key = "STANDIN_API_KEY"\nwire_api = "responses"\n'
    )
    real.env |= {"AGENT_ROOM_CODEX": str(client_binary("codex")), "STANDIN_API_KEY": "k"}
    script.add("LINK-OPEN", Reply("Asking.", bash=f'agent-room send @frontend "{ASK}" --link'))
    script.add("[From @frontend]", Reply(THANKS))
    real.start("backend")
    (real.root / "frontend").mkdir()
    started = real.run(
        "start", "frontend", "--agent", "codex", "--cwd", str(real.root / "frontend")
    )
    assert started.code == 0, started.err
    real.wait(lambda: READY["codex"] in real.screen("frontend"), STARTUP, "frontend")
    real.server.cmd("send-keys", "-t", "=ac-frontend:", "-l", "--", "say hello")
    time.sleep(KEY_SETTLE)
    real.keys("frontend", "Enter")  # Codex is in the room from its first prompt
    real.wait(lambda: real.member("frontend").get("state") == "idle", TURN, "frontend")

    real.type("backend", "LINK-OPEN: ask frontend what the list needs")
    real.wait(lambda: _links(real), TURN, "backend", "frontend")
    # Codex reads the linked message; its final output crosses back to Claude Code, framed
    real.wait(lambda: codex_api.saw("q-81"), TURN, "backend", "frontend")
    real.wait(
        lambda: real.seen.turns_showing("backend", "[From @frontend] PONG"),
        TURN,
        "backend",
        "frontend",
    )
    # and Claude Code's answer crosses to Codex
    real.wait(lambda: codex_api.saw(f"[From @backend] {THANKS}"), TURN, "backend", "frontend")
    (link,) = _links(real)
    assert (link["initiator"], link["responder"], link["state"]) == ("backend", "frontend", "open")
