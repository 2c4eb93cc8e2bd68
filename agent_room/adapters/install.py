"""This install's ``agent-room``: the command a process of the room starts another with
(the background deliverer, the demo's agents and windows), so that both run the same
code whatever ``PATH`` holds."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def agent_room_command() -> list[str]:
    """The ``agent-room`` script beside this Python, else ``python -m agent_room``."""
    beside = Path(sys.executable).parent / "agent-room"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    return [sys.executable, "-m", "agent_room"]
