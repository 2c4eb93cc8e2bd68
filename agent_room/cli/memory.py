"""Handlers of the room's memory commands: ledger (and, below, checkpoints, entities)."""

from __future__ import annotations

import os
import sys
import time

from agent_room.cli.output import print_json
from agent_room.room import Room

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _after(start: float, at: float | None) -> str:
    from agent_room.core.timers import format_duration

    return "-" if at is None else format_duration(at - start)


def _table(header: tuple[str, ...], body: list[tuple[str, ...]]) -> None:
    table = [header, *body]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def cmd_ledger(args: argparse.Namespace) -> int:
    from agent_room.core.timers import parse_duration
    from agent_room.room.ledger import Ledger

    within = parse_duration(args.since) if args.since else None
    ledger = Ledger(Room.open(os.environ))
    if args.stats:
        summary = ledger.stats(agent=args.agent, within=within)
        if args.json:
            print_json(summary)
        else:
            _print_stats(summary)
        return 0
    items = ledger.history(agent=args.agent, within=within)
    if args.json:
        print_json([item.as_dict() for item in items])
        return 0
    if not items:
        print("no handovers yet", file=sys.stderr)
        return 0
    _table(
        ("ID", "FROM", "TO", "OUTCOME", "REQUESTED", "DECIDED", "APPLIED"),
        [
            (
                f"#{i.id}",
                f"@{i.sender}",
                f"@{i.recipient}",
                i.outcome,
                _when(i.requested_at),
                _after(i.requested_at, i.decided_at),
                _after(i.requested_at, i.applied_at),
            )
            for i in items
        ],
    )
    return 0


def _print_stats(summary: dict[str, dict[str, dict[str, Any]]]) -> None:
    from agent_room.core.ledger import OUTCOMES
    from agent_room.core.timers import format_duration

    def cells(name: str, tally: dict[str, Any]) -> tuple[str, ...]:
        rate = tally["approval_rate"]
        return (
            name,
            str(tally["total"]),
            *(str(tally[o]) for o in OUTCOMES),
            "-" if rate is None else f"{rate:.0%}",
            *(
                "-" if tally[k] is None else format_duration(tally[k])
                for k in ("median_to_decision", "median_to_applied")
            ),
        )

    header = ("TOTAL", *(o.upper() for o in OUTCOMES), "APPROVED", "TO DECISION", "TO APPLIED")
    if not summary["pairs"]:
        print("no handovers yet", file=sys.stderr)
        return
    _table(("PAIR", *header), [cells(k, v) for k, v in summary["pairs"].items()])
    print()
    _table(("AGENT", *header), [cells(f"@{k}", v) for k, v in summary["agents"].items()])
