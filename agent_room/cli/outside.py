"""``who`` and ``tree``: the Claude Code sessions outside the room, below its members;
``transport``: how messages reach the agents."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from agent_room.core.native import DEFAULT_PREFERENCE, SETTING, Preference
from agent_room.room.base import RoomBase
from agent_room.room.native import native_registry, outside_sessions
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.printable import printable
from agent_room.turn.room.service import RoomCore

HEADER = ("NAME", "STATUS", "KIND", "PANE", "PID", "CWD")


def outside_rows(
    room: RoomBase, members: Callable[[], Sequence[Mapping[str, Any]]] | None = None
) -> list[dict[str, Any]]:
    """The sessions the client lists that are not in the room (``members``: the room's
    sessions as the caller read them, if it did)."""
    return outside_sessions(room, native_registry(os.environ), members)


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


def cmd_transport(*, mode: str | None) -> int:
    """Show or set the room's delivery transport (read by the deliverer on every pass)."""
    room = RoomCore.open(os.environ)
    try:
        store = SettingsStore(room.store)
        if mode is not None:
            value = None if mode == DEFAULT_PREFERENCE else mode
            store.save({SETTING: value}, at=room.clock(), by="operator")
        chosen = Preference(store.get(SETTING) or DEFAULT_PREFERENCE)
    finally:
        room.close()
    words = {
        Preference.NATIVE_FIRST: "Claude Code's messaging socket where a client offers it,"
        " else a nudge typed into the pane",
        Preference.TMUX: "a nudge typed into the pane",
        Preference.NATIVE: "only Claude Code's messaging socket; other agents keep their"
        " messages, with the reason",
    }
    print(f"transport: {chosen} ({words[chosen]})")
    return 0


# The command (loaded by cli.app when it runs).


@click.command("transport")
@click.argument(
    "mode",
    metavar="MODE",
    required=False,
    type=click.Choice(("native-first", "tmux", "native")),
    help="native-first (Claude Code's socket where offered, else the pane; the default),"
    " tmux (always the pane) or native (only the socket)",
)
def transport_command(mode: str | None) -> int:
    return cmd_transport(mode=mode)
