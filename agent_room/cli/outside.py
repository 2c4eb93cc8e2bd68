"""``who`` and ``tree``: the Claude Code sessions outside the room, below its members."""

from __future__ import annotations

import os
import sys

from agent_room.core.printable import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_room.room import Room

HEADER = ("NAME", "STATUS", "KIND", "PANE", "PID", "CWD")


def outside_rows(room: Room) -> list[dict[str, Any]]:
    """The sessions the client lists that are not in the room."""
    from agent_room.room.native import native_registry, outside_sessions

    return outside_sessions(room, native_registry(os.environ))


def print_outside(rows: list[dict[str, Any]]) -> None:
    """A second table under ``who``'s, and how to bring each session in."""
    if not rows:
        return
    print("\noutside the room (Claude Code sessions without the room's plugin):")
    table = [HEADER] + [
        tuple(
            printable(str(cell))
            for cell in (
                r["name"],
                r["native_status"],
                r["kind"] + (f" {r['job']}" if r["job"] else ""),
                r["pane"] or "-",
                r["pid"],
                r["cwd"],
            )
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER) - 1)]
    for row in table:
        print("  ".join([*(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])), row[-1]]))
    print("to bring one in:", file=sys.stderr)
    for r in rows:
        print(f"  {printable(r['name'])}: {printable(r['bring_in'])}", file=sys.stderr)
