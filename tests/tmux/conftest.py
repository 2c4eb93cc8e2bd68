"""Real tmux: a private server per test (libtmux's pytest plugin), real panes and keys."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, require_tool

STANDIN = REPO / "tests" / "standin_agent.py"


@pytest.fixture(autouse=True)
def _need_tmux() -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")


def agent_command(room_home: Path, name: str, *extra: str) -> str:
    """The shell command a pane starts with: the stand-in agent for ``name``."""
    env = " ".join(
        f"{k}={v}"
        for k, v in {
            "AGENT_ROOM_HOME": str(room_home),
            "AGENT_ROOM_NAME": name,
            "PYTHONPATH": str(REPO),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }.items()
    )
    return f"env {env} {sys.executable} {STANDIN} {' '.join(extra)}".strip()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder runs a real tmux server: the ``tmux`` tier."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.tmux)
