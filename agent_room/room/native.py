"""Claude Code sessions outside the room, beside its members in ``who``, ``tree`` and
the console.

The client's own registry lists every running session, with the room's plugin or
without; those the room does not know are shown marked as outside, with their native
status and how to bring them in (``core.native.outside``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_room.adapters.claude_native import FileRegistry, claude_dir
from agent_room.adapters.processes import SystemProbe
from agent_room.core.native import outside
from agent_room.core.ports import NativeRegistry
from agent_room.core.tree import TreeNode
from agent_room.room.base import RoomBase
from agent_room.turn import procfs

OUTSIDE_KIND = "outside"
"""The tree node kind of a session outside the room."""


def native_registry(environ: Mapping[str, str]) -> NativeRegistry | None:
    """The client's registry on this system (None where it keeps none we can read)."""
    if not sys.platform.startswith("linux"):
        return None
    return FileRegistry(claude_dir(environ), SystemProbe())


def outside_sessions(
    room: RoomBase,
    registry: NativeRegistry | None,
    members: Callable[[], Sequence[Mapping[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """``who`` rows for the live client sessions that are not in the room (``members``:
    the room's sessions, from what the caller read already)."""
    if registry is None:
        return []
    sessions = registry.sessions()
    if not sessions:  # nobody to compare: the members' query grows with the room
        return []
    here = str(Path(room.store.home).resolve())
    sessions = [s for s in sessions if not _in_another_room(s.pid, here)]
    known = room.store.members() if members is None else members()
    return outside(sessions, known, room.clock())


def _in_another_room(pid: int, here: str) -> bool:
    """A session started for another room (its ``AGENT_ROOM_HOME`` names another): that
    room's agent, not one outside every room to be ended or brought in here."""
    home = procfs.environ_value(pid, "AGENT_ROOM_HOME")
    return bool(home) and str(Path(str(home)).expanduser().resolve()) != here


def outside_nodes(rows: list[dict[str, Any]]) -> list[TreeNode]:
    """Tree roots for sessions outside the room."""
    return [
        TreeNode(
            label=f"{row['name']} (outside the room, {row['native_status']})",
            session_id=row["session_id"],
            state=str(row["state"]),
            depth=0,
            kind=OUTSIDE_KIND,
        )
        for row in rows
    ]
