"""Handlers of the room's memory commands: ledger (and, below, checkpoints, entities)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from agent_room.cli import launcher
from agent_room.cli.output import print_json
from agent_room.cli.params import COUNT, Group, json_option
from agent_room.cli.start import start_command
from agent_room.core.checkpoints import check_mode
from agent_room.core.ledger import OUTCOMES
from agent_room.core.memory import CHARS_PER_TOKEN
from agent_room.room.checkpoints import Checkpoints, cancel_resume, queue_resume
from agent_room.room.entities import Entities
from agent_room.room.ledger import Ledger
from agent_room.room.memory_settings import change_settings
from agent_room.room.service import Room
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.names import parse_name
from agent_room.turn.core.printable import printable
from agent_room.turn.core.timers import format_duration, parse_duration


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _after(start: float, at: float | None) -> str:
    return "-" if at is None else format_duration(at - start)


def _table(header: tuple[str, ...], body: list[tuple[str, ...]]) -> None:
    table = [header, *body]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())


def cmd_ledger(*, agent: str | None, since: str | None, stats: bool, as_json: bool) -> int:
    within = parse_duration(since) if since else None
    ledger = Ledger(Room.open(os.environ))
    if stats:
        summary = ledger.stats(agent=agent, within=within)
        if as_json:
            print_json(summary)
        else:
            _print_stats(summary)
        return 0
    items = ledger.history(agent=agent, within=within)
    if as_json:
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

    header = ("TOTAL", *(o.upper() for o in OUTCOMES), "RATE", "TO DECISION", "TO APPLIED")
    if not summary["pairs"]:
        print("no handovers yet", file=sys.stderr)
        return
    _table(("PAIR", *header), [cells(k, v) for k, v in summary["pairs"].items()])
    print()
    _table(("AGENT", *header), [cells(f"@{k}", v) for k, v in summary["agents"].items()])


def cmd_checkpoint(*, name: str, note: str | None) -> int:
    checkpoint_id = Checkpoints(Room.open(os.environ)).take_named(name, note=note)
    print(f"checkpoint #{checkpoint_id} of @{name} taken", file=sys.stderr)
    print(checkpoint_id)
    return 0


def cmd_checkpoints(*, name: str | None, keep: int | None, days: int | None, as_json: bool) -> int:
    checkpoints = Checkpoints(Room.open(os.environ))
    if keep is not None or days is not None:
        checkpoints.set_retention(keep=keep, days=days)
        kept, within = checkpoints.retention()
        print(f"checkpoints kept: {kept} per session, {within:g} days", file=sys.stderr)
        return 0
    listed = checkpoints.listed(name)
    if as_json:
        print_json(listed)
        return 0
    if not listed:
        print("no checkpoints", file=sys.stderr)
        return 0
    _table(
        ("ID", "NAME", "KIND", "TAKEN", "NOTE"),
        [
            (
                f"#{c['id']}",
                f"@{c['name']}",
                c["kind"],
                _when(c["created_at"]),
                printable(c["note"] or ""),
            )
            for c in listed
        ],
    )
    return 0


def cmd_memory_settings(*, budget: int | None, as_json: bool) -> int:
    values = change_settings(Room.open(os.environ), budget=budget)
    if as_json:
        print_json(values)
    else:
        print(
            f"handover context budget: {values['budget']} tokens"
            f" (estimated as characters / {CHARS_PER_TOKEN})"
        )
    return 0


def cmd_resume(
    *,
    checkpoint: str,
    mode: str,
    agent: str | None,
    print_only: bool,
    name: str | None,
    cwd: str | None,
    detach: bool,
) -> int:
    check_mode(mode, agent)
    room = Room.open(os.environ)
    checkpoints = Checkpoints(room)
    found = checkpoints.find(checkpoint)
    text = checkpoints.context(f"#{found['id']}", mode=mode, agent=agent)
    if print_only:
        sys.stdout.write(printable(text, multiline=True))
        return 0
    kept = found["cwd"]
    where = cwd or (kept if kept and Path(kept).is_dir() else None)
    return start_resumed(room, name or str(found["name"]), text, cwd=where, detach=detach)


def start_resumed(room: Room, name: str, text: str, *, cwd: str | None, detach: bool) -> int:
    """Start agent ``name`` through ``start``, the checkpoint's context waiting for it in the
    room: its SessionStart hook hands it over."""
    message_id = queue_resume(room, parse_name(name), text)
    # through the parser, so the start gets every option's default as typed by hand
    words = [name, *(["--cwd", cwd] if cwd else []), *(["--detach"] if detach else [])]
    start = launcher.StartOptions(**start_command.make_context("start", words).params)
    try:
        return launcher.cmd_start(start)
    except BaseException:
        cancel_resume(room, message_id)
        raise


def cmd_entities(
    *,
    words: list[str],
    kind: str | None,
    as_json: bool,
    take: bool,
    keep: bool,
    strategy: str | None,
    threshold: float | None,
) -> int:
    entities = Entities(Room.open(os.environ))
    if strategy is not None or threshold is not None:
        entities.configure(strategy=strategy, threshold=threshold)
        print(
            f"entities: {entities.strategy}, names alike from {entities.threshold:g}",
            file=sys.stderr,
        )
        return 0
    if words[:1] == ["merge"]:
        if len(words) != 3:
            raise BadInput("usage: agent-room entities merge A B (ids or names)")
        merged = entities.merge(words[1], words[2])
        print(f"#{merged['id']} {printable(str(merged['name']))} is version {merged['version']}")
        return 0
    if words[:1] == ["conflicts"]:
        return _print_conflicts(entities, as_json)
    if words[:1] == ["resolve"]:
        if len(words) != 2 or not words[1].removeprefix("#").isdigit() or take == keep:
            raise BadInput("usage: agent-room entities resolve ID --take|--keep")
        entities.resolve(int(words[1].removeprefix("#")), take=take)
        return 0
    found = entities.search(" ".join(words) or None, kind=kind)
    if as_json:
        print_json([{**row, "mentioned_by": entities.mentions(int(row["id"]))} for row in found])
        return 0
    if not found:
        print("no entities", file=sys.stderr)
        return 0
    _table(
        ("ID", "TYPE", "NAME", "VERSION", "MENTIONS", "LAST BY", "CONTEXT"),
        [
            (
                f"#{r['id']}",
                r["type"],
                printable(str(r["name"])),
                str(r["version"]),
                str(r.get("mentions", "")),
                f"@{r['updated_by']}" if r["updated_by"] else "-",
                printable(str(r["context"]))[:60],
            )
            for r in found
        ],
    )
    return 0


def _print_conflicts(entities: Any, as_json: bool) -> int:
    found = entities.conflicts()
    if as_json:
        print_json(found)
    elif not found:
        print("no entity conflicts", file=sys.stderr)
    for c in [] if as_json else found:
        print(
            f"#{c['id']} {c['type']} {printable(str(c['name']))}: @{c['agent']} says"
            f" {printable(str(c['context']))!r}, kept {printable(str(c['current']))!r}"
        )
    return 0


# The commands: ledger, checkpoint, checkpoints, resume, entities, memory settings
# (loaded by cli.app when they run).


@click.command("ledger")
@click.option("--agent", metavar="NAME", help="only handovers NAME sent or received")
@click.option("--since", metavar="DURATION", help="only the last DURATION, e.g. 2h or 7d")
@click.option("--stats", is_flag=True, help="per pair and agent: outcomes, rates, median times")
@json_option
def ledger_command(agent: str | None, since: str | None, stats: bool, as_json: bool) -> int:
    return cmd_ledger(agent=agent, since=since, stats=stats, as_json=as_json)


@click.command("checkpoint")
@click.argument("name", metavar="NAME", help="the agent")
@click.option("--note", metavar="TEXT", help="why: shown when resuming")
def checkpoint_command(name: str, note: str | None) -> int:
    return cmd_checkpoint(name=name, note=note)


@click.command("checkpoints")
@click.argument("name", metavar="NAME", required=False, help="only this agent's")
@click.option("--keep", type=COUNT, metavar="N", help="keep N per session (default 10)")
@click.option("--days", type=COUNT, metavar="D", help="keep them D days (default 30)")
@json_option
def checkpoints_command(name: str | None, keep: int | None, days: int | None, as_json: bool) -> int:
    return cmd_checkpoints(name=name, keep=keep, days=days, as_json=as_json)


@click.command("resume")
@click.argument("checkpoint", metavar="NAME|CHECKPOINT", help="an agent's newest, or #ID")
@click.option("--mode", default="full", help="full (default), partial (last 50) or agent")
@click.option("--agent", metavar="NAME", help="--mode agent: only what involved NAME")
@click.option("--print", "print_", is_flag=True, help="print the context, start nothing")
@click.option("--name", metavar="NEW", help="the new agent's name (default: the same)")
@click.option("--cwd", metavar="DIR", help="where it works (default: where it did)")
@click.option("--detach", is_flag=True, help="do not attach to the new agent")
def resume_command(
    checkpoint: str,
    mode: str,
    agent: str | None,
    print_: bool,
    name: str | None,
    cwd: str | None,
    detach: bool,
) -> int:
    return cmd_resume(
        checkpoint=checkpoint,
        mode=mode,
        agent=agent,
        print_only=print_,
        name=name,
        cwd=cwd,
        detach=detach,
    )


@click.command(
    "entities",
    epilog="Its other forms: entities merge A B | entities conflicts"
    " | entities resolve ID --take|--keep | entities --strategy S --threshold X",
)
@click.argument("words", metavar="QUERY", nargs=-1, help="words to look for (fuzzy)")
@click.option("--type", "type_", help="file, module, function, endpoint, contract, service, tool")
@json_option
@click.option("--take", is_flag=True, help="resolve: the mention's context wins")
@click.option("--keep", is_flag=True, help="resolve: the entity's context stays")
@click.option("--strategy", help="merge_context (default), newest_wins, highest_confidence, manual")
@click.option("--threshold", type=float, help="name similarity for one entity (0.85)")
def entities_command(
    words: tuple[str, ...],
    type_: str | None,
    as_json: bool,
    take: bool,
    keep: bool,
    strategy: str | None,
    threshold: float | None,
) -> int:
    return cmd_entities(
        words=list(words),
        kind=type_,
        as_json=as_json,
        take=take,
        keep=keep,
        strategy=strategy,
        threshold=threshold,
    )


@click.group("memory", cls=Group)
def memory_command() -> None:
    """The memory's settings: a handover context's budget."""


@memory_command.command("settings")
@click.option("--budget", type=COUNT, metavar="TOKENS", help="tokens a context may take (5000)")
@json_option
def _memory_settings(budget: int | None, as_json: bool) -> int:
    """Show or change the budget of a handover's context."""
    return cmd_memory_settings(budget=budget, as_json=as_json)
