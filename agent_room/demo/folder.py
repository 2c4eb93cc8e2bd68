"""Where demo rooms live, for the commands that must recognise one without loading the demo.

A demo room is a private folder ``$TMPDIR/agent-room-demo-XXXXXXXX`` holding the room
(``room/``) and the tmux socket (``t``); ``eval "$(agent-room demo --detach)"`` points a
shell at them with ``AGENT_ROOM_HOME`` and ``AGENT_ROOM_TMUX``, and the shell keeps
pointing there after the demo has stopped and its folder is gone.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

PREFIX = "agent-room-demo-"
"""The start of a demo room's folder name."""
POINTERS = ("AGENT_ROOM_HOME", "AGENT_ROOM_TMUX")
"""The variables ``demo --detach`` prints export lines for."""


def stopped_demo(environ: Mapping[str, str]) -> Path | None:
    """The folder of a stopped demo room that ``environ`` still points into (its folder
    is gone), or None."""
    for variable in POINTERS:
        value = environ.get(variable)
        if not value:
            continue
        root = Path(value).parent
        if root.name.startswith(PREFIX) and not root.exists():
            return root
    return None


def forget_hint() -> str:
    """The shell line that points ``agent-room`` back at the user's own room."""
    return "unset " + " ".join(POINTERS)
