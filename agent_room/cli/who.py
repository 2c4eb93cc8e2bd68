"""``who`` and ``tree``: the sessions in the room, as a table or as the tree of who
started whom (with the agents outside the room beside them).

Both open the turn path's ``RoomCore``, not ``Room``: they read the roster, and load
nothing of the room's memory or handover rules (``tests/test_layering.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from agent_room.adapters.processes import SystemProbe
from agent_room.cli.output import print_json
from agent_room.cli.outside import outside_rows, print_outside
from agent_room.cli.params import json_option
from agent_room.core.links import links_summary
from agent_room.core.tree import render_tree
from agent_room.core.usage import money
from agent_room.room.native import outside_nodes
from agent_room.room.roster import Roster, session_tree
from agent_room.room.worktrees import branch_cells, branch_states, mark_branches
from agent_room.store.views import live_worktrees
from agent_room.turn.core.printable import printable
from agent_room.turn.room.registry import Registry
from agent_room.turn.room.service import RoomCore
from agent_room.turn.store.hosts import SILENT_AFTER


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _registry(room: RoomCore) -> Registry:

    registry = Registry(room, SystemProbe())
    registry.refresh()
    return registry


def cmd_who(*, as_json: bool) -> int:

    room = RoomCore.open(os.environ)
    try:
        _registry(room)
        roster = Roster(room)
        others = outside_rows(room, roster.identities)
        states: dict[str, Any] = {}
        branches = None
        if live_worktrees(room.store):  # someone works in a worktree: git tells its branch
            states = branch_states(room) if as_json else {}
            branches = None if as_json else branch_cells(room, roster.names)
    finally:
        room.close()
    if as_json:
        sessions = roster.sessions()
        for row in sessions:
            if row["name"] in states:  # on a worktree's branch: how far from its base
                state = states[row["name"]]
                row["branch"] = state.as_dict() if state else None
        print_json(sessions + others)
        return 0
    if not roster.names:
        print("nobody is in the room", file=sys.stderr)
        print_outside(others)
        return 0
    sys.stdout.write(_who_table(roster, branches))
    _say_silent(roster.silent)
    print_outside(others)
    return 0


def _say_silent(hosts: set[str]) -> None:
    """Why sessions show as ``unknown``: their host's watch, the only judge of their
    processes, has not been heard from."""

    for host in sorted(hosts):
        print(
            f"host {printable(host)} is silent (no watch of it seen in {SILENT_AFTER:.0f} s):"
            " its sessions' state is unknown",
            file=sys.stderr,
        )


def _who_table(roster: Roster, branches: list[str] | None = None) -> str:
    """``who``'s table, laid out column by column: one string per cell and no object per
    session, so that 2,000 sessions cost little more than 50."""
    count = len(roster.names)
    index = dict(zip(roster.names, range(count), strict=True))
    unread = ["0"] * count
    for name in roster.unread.keys() | roster.held.keys():
        if (i := index.get(name)) is not None:
            mine, failed = roster.unread.get(name, (0, 0))
            held = roster.held.get(name, 0)
            unread[i] = (
                f"{mine}"
                + (f" ({failed} failed)" if failed else "")
                + (f" ({held} held)" if held else "")
            )
    costs = [_cost(roster, name) for name in roster.names]
    links = ["-"] * count
    if roster.links:
        for name, (live, loose) in roster.links.items():
            links[index[name]] = links_summary(live, unanchored=loose) or "-"
    columns: list[tuple[str, Sequence[str]]] = [
        ("NAME", roster.names),
        ("STATE", roster.states),
        ("AGENT", [agent or "-" for agent in roster.agents]),
        ("PANE", [pane or "-" for pane in roster.panes]),
        ("PID", [str(pid or "-") for pid in roster.pids]),
        ("AGE", [_age(age) for age in roster.ages]),
        ("UNREAD", unread),
        ("LINKS", links),
        ("TODAY", costs),
        ("CWD", [cwd or "-" for cwd in roster.cwds]),
    ]
    if branches is not None:  # someone works in a worktree: its branch, ahead/behind, dirty
        columns.insert(3, ("BRANCH", branches))
    if len(set(roster.hosts)) > 1:  # a room across machines: say where
        columns.insert(3, ("HOST", [host or "-" for host in roster.hosts]))
    cells = [_printable_cells([title, *column]) for title, column in columns]
    widths = [max(map(len, column)) for column in cells[:-1]]
    line = "  ".join(f"%-{width}s" for width in widths) + "  %s"
    return "\n".join([line % row for row in zip(*cells, strict=True)]) + "\n"


def _cost(roster: Roster, name: str) -> str:
    """What the agent spent today (``?`` for a model without a price), and whether a
    spent budget holds its prompts."""

    spent, known = roster.costs.get(name, (0.0, True))
    text = money(spent, known=known) if name in roster.costs else "-"
    return f"{text} (over budget)" if roster.over_budget(name) else text


def _printable_cells(cells: list[str]) -> list[str]:
    """A column's cells, each on one line and shown, not acted on (``printable``): one
    check of the whole column, and one per cell only where something is to escape."""
    if "".join(cells).isprintable():
        return cells
    return [printable(cell) for cell in cells]


def cmd_tree(*, as_json: bool) -> int:

    room = RoomCore.open(os.environ)
    _registry(room)  # the sessions that ended unseen are marked first
    roots = session_tree(room) + outside_nodes(outside_rows(room))
    if live_worktrees(room.store):
        mark_branches(room, roots)
    if as_json:
        print_json([root.as_dict() for root in roots])
    elif roots:
        sys.stdout.write(printable(render_tree(roots), multiline=True))
    else:
        print("nobody is in the room", file=sys.stderr)
    return 0


@click.command("who")
@json_option
def who_command(as_json: bool) -> int:
    return cmd_who(as_json=as_json)


@click.command("tree")
@json_option
def tree_command(as_json: bool) -> int:
    return cmd_tree(as_json=as_json)
