"""``agent-room demo --codex --gemini``: the demo room with a real Codex CLI and a real
Gemini CLI beside the simulated agents, on the built-in stand-in; pings reach both."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.clients.conftest import STARTUP, client_binary
from tests.conftest import Cli, require_tool
from tests.poll import wait_for


def test_a_mixed_demo_room_delivers_to_codex_and_gemini(cli: Cli, tmp_path: Path) -> None:
    for kind in ("codex", "gemini"):
        binary = client_binary(kind)
        require_tool(binary.is_file() and os.access(binary, os.X_OK), f"{kind} at {binary}")
    tmp_root = tmp_path / "t"
    tmp_root.mkdir()
    env = {
        "TMPDIR": str(tmp_root),
        "HOME": str(tmp_path / "home"),  # never written: the demo has a HOME of its own
        "AGENT_ROOM_CODEX": str(client_binary("codex")),
        "AGENT_ROOM_GEMINI": str(client_binary("gemini")),
    }
    started = cli("demo", "--codex", "--gemini", "--detach", env=env)
    assert started.code == 0, started.err
    try:
        demo = dict(
            line.removeprefix("export ").split("=", 1) for line in started.out.split("\n") if line
        )
        demo.update(env)

        def rows(*args: str) -> Any:
            result = cli(*args, "--json", env=demo)
            assert result.code == 0, result.err
            return json.loads(result.out)

        def who() -> dict[str, str]:
            return {row["name"]: row["agent"] for row in rows("who")}

        wait_for(lambda: {"reviewer", "docs"} <= set(who()), timeout=STARTUP)
        kinds = who()
        assert (kinds["reviewer"], kinds["docs"], kinds["backend"]) == (
            "codex",
            "gemini",
            "simulated",
        )

        def pinged(name: str) -> bool:
            return any(
                m["recipient"] == name and m["status"] == "delivered" for m in rows("history")
            )

        wait_for(lambda: pinged("reviewer") and pinged("docs"), timeout=STARTUP * 2)
    finally:
        assert cli("demo", "--stop", "all", env=env).code == 0
    assert list(tmp_root.iterdir()) == []
    assert not (tmp_path / "home").exists()
