"""``agent-room demo --claude``: the demo room with four real clients and the built-in model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import Cli
from tests.poll import wait_for
from tests.real.conftest import STARTUP, claude_binary


def _json(cli: Cli, env: dict[str, str], *args: str) -> Any:
    result = cli(*args, "--json", env=env)
    assert result.code == 0, result.err
    return json.loads(result.out)


def _screen(env: dict[str, str], name: str) -> str:
    proc = subprocess.run(
        [
            "tmux",
            "-S",
            env["AGENT_ROOM_TMUX"],
            "capture-pane",
            "-p",
            "-J",
            "-S",
            "-",
            "-t",
            f"=ac-{name}:",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout


def test_the_claude_demo_tells_the_same_story(cli: Cli, tmp_path: Path) -> None:
    tmp_root = tmp_path / "t"
    tmp_root.mkdir()
    env = {"TMPDIR": str(tmp_root), "AGENT_ROOM_CLAUDE": str(claude_binary())}
    started = cli("demo", "--claude", "--detach", env=env)
    assert started.code == 0, started.err
    try:
        demo = dict(
            line.removeprefix("export ").split("=", 1) for line in started.out.split("\n") if line
        )
        demo.update(env)

        def who() -> dict[str, dict[str, Any]]:
            return {row["name"]: row for row in _json(cli, demo, "who")}

        wait_for(lambda: len(who()) == 4, timeout=STARTUP)
        assert {row["agent"] for row in who().values()} == {"claude"}
        wait_for(lambda: _json(cli, demo, "handovers"), timeout=STARTUP)
        wait_for(lambda: who()["mobile"]["state"] == "waiting", timeout=STARTUP)
        (handover,) = _json(cli, demo, "handovers")
        assert (handover["sender"], handover["recipient"]) == ("backend", "frontend")
        replies = [m for m in _json(cli, demo, "history") if m["sender"] == "frontend"]
        assert [m["status"] for m in replies[:1]] == ["delivered"]  # the reply came back

        assert cli("approve", str(handover["message_id"]), env=demo).code == 0
        wait_for(lambda: "building the task list view" in _screen(demo, "frontend"), STARTUP)
        assert "Do you want to proceed?" in _screen(demo, "mobile")
        held = "a permission dialog is open"
        wait_for(lambda: who()["mobile"]["delivery"] == held, timeout=STARTUP)
        assert who()["mobile"]["state"] == "waiting"
    finally:
        assert cli("demo", "--stop", "all", env=env).code == 0
    assert list(tmp_root.iterdir()) == []
