"""Handlers of the link and timer commands: send --link/--close-link, links, link, timers.

Who runs a command: an agent (``AGENT_ROOM_NAME``, its registered pane, or ``--as``), or
else the operator. The operator may close, freeze and thaw any link; an agent only the
links it is in, and only the initiator closes.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

import click

from agent_room.cli.output import print_json
from agent_room.cli.params import (
    COUNT,
    MESSAGE_ID,
    Group,
    as_option,
    json_option,
    sentence,
)
from agent_room.core.links import parse_loop
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.turn.core.printable import printable
from agent_room.turn.core.timers import format_duration, parse_duration


def _open() -> Room:
    return Room.open(os.environ)


def _caller(room: Room, as_name: str | None) -> str | None:
    """The agent running the command (``--as`` names it, if given), or None for the
    operator."""
    env_name = os.environ.get("AGENT_ROOM_NAME")
    pane = os.environ.get("TMUX_PANE")
    if env_name or as_name:
        return room.identify(env_name=env_name, pane=None, as_name=as_name)
    if pane and room.store.holder_of_pane(pane):
        return room.identify(env_name=None, pane=pane, as_name=None)
    return None


def _ago(seconds: float) -> str:
    return format_duration(seconds)


def cmd_links(*, live: bool, as_json: bool) -> int:
    """List links, newest first."""
    room = _open()
    rows = Links(room).links(live_only=live)
    if as_json:
        print_json(rows)
        return 0
    if not rows:
        print("no links", file=sys.stderr)
        return 0
    now = time.time()
    header = ("ID", "STATE", "INITIATOR", "RESPONDER", "LEFT", "HELD", "AGE", "NOTE")
    table = [header]
    for r in rows:
        note = printable(r["close_reason"] or r["freeze_reason"] or "")  # free text
        table.append(
            (
                f"#{r['id']}",
                r["state"],
                f"@{r['initiator']}",
                f"@{r['responder']}",
                f"{r['crossings_left']}/{r['budget']}",
                str(r["held"]),
                _ago(now - r["opened_at"]),
                note,
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        print("  ".join([*(c.ljust(widths[i]) for i, c in enumerate(row[:-1])), row[-1]]))
    return 0


def cmd_link(*, action: str, id: int, as_name: str | None) -> int:
    """``link freeze|thaw|close ID``."""
    room = _open()
    links = Links(room)
    caller = _caller(room, as_name)
    act = {"freeze": links.freeze, "thaw": links.thaw, "close": links.close}[action]
    act(id, caller=caller)
    past = {"freeze": "frozen", "thaw": "thawed", "close": "closed"}[action]
    print(f"link #{id} {past}", file=sys.stderr)
    return 0


def cmd_link_grant(*, id: int, count: int, as_name: str | None) -> int:
    """``link grant ID COUNT``: more crossings for a link (the operator only)."""
    room = _open()
    link = Links(room).grant(id, count, caller=_caller(room, as_name))
    left = max(0, int(link["budget"]) - int(link["crossings"]))
    pair = f"@{link['initiator']} and @{link['responder']}"
    if link["state"] == "closed":
        print(
            f"link #{id} is closed: the next link between {pair} within the budget"
            f" window starts with {left} crossings",
            file=sys.stderr,
        )
    else:
        print(f"link #{id}: {count} more crossings ({left} left)", file=sys.stderr)
    return 0


def cmd_link_settings(
    *,
    budget: int | None,
    budget_window: str | None,
    loop: str | None,
    checkpoint_patterns: list[str] | None,
    default_patterns: bool,
    sever_grace: float | None,
    as_json: bool,
) -> int:
    """Show or change the room's link settings."""
    links = Links(_open())
    window = None
    if budget_window is not None:
        window = 0.0 if budget_window.strip() == "0" else parse_duration(budget_window)
    settings = links.configure(
        budget_window=window,
        budget=budget,
        loop=parse_loop(loop) if loop is not None else None,
        patterns=checkpoint_patterns,
        default_patterns=default_patterns,
        sever_grace=sever_grace,
    )
    if as_json:
        print_json(settings._asdict())
        return 0
    breaker = f"{settings.loop_max}/{settings.loop_window:g}s" if settings.loop_max else "off"
    print(f"budget: {settings.budget} crossings per link (set when a link opens)")
    carry = format_duration(settings.budget_window) if settings.budget_window else "off"
    print(f"budget window: {carry} (a pair's next link inherits what its last one left)")
    print(f"loop breaker: {breaker}")
    print(f"sever grace: {settings.sever_grace:g}s (an ended session may resume meanwhile)")
    for pattern in settings.checkpoint_patterns:
        print(f"checkpoint pattern: {pattern}")
    return 0


def cmd_timer(*, intent: str, duration: str, text: Sequence[str], as_name: str | None) -> int:
    """``timer anchor|check|wait DURATION TEXT``: a timer for the calling agent."""
    room = _open()
    name = room.identify(
        env_name=os.environ.get("AGENT_ROOM_NAME"),
        pane=os.environ.get("TMUX_PANE"),
        as_name=as_name,
    )
    timer = Links(room).set_timer(name, intent, duration, " ".join(text))
    wait = format_duration(timer["due_at"] - timer["created_at"])
    print(f"timer #{timer['id']} ({timer['intent']}) for @{name} fires in {wait}", file=sys.stderr)
    print(timer["id"])
    return 0


def cmd_timer_cancel(*, id: int, as_name: str | None) -> int:
    """``timer cancel ID``: the owner or the operator."""
    room = _open()
    Links(room).cancel_timer(id, caller=_caller(room, as_name))
    print(f"timer #{id} cancelled", file=sys.stderr)
    return 0


def cmd_timers(*, every: bool, as_json: bool) -> int:
    """List pending timers (``--all``: fired and cancelled ones too)."""
    rows = Links(_open()).timers(pending_only=not every)
    if as_json:
        print_json(rows)
        return 0
    if not rows:
        print("no timers", file=sys.stderr)
        return 0
    now = time.time()
    for r in rows:
        when = (
            f"in {format_duration(r['due_at'] - now)}"
            if r["state"] == "pending"
            else f"{r['state']} {format_duration(now - (r['fired_at'] or now))} ago"
        )
        # a timer's text may hold lines and bidi marks: one timer stays one line
        print(f"#{r['id']}  @{r['name']}  {r['intent'].upper()}  {when}  {printable(r['text'])}")
    return 0


# The commands: links, link ..., timer ..., timers (loaded by cli.app when they run).

LINK_ID = click.argument(
    "id", metavar="ID", type=MESSAGE_ID, help="the link's id (links lists them)"
)


@click.command("links")
@click.option("--live", is_flag=True, help="only open and frozen links")
@json_option
def links_command(live: bool, as_json: bool) -> int:
    return cmd_links(live=live, as_json=as_json)


@click.group("link", cls=Group)
def link_command() -> None:
    """Freeze, thaw or close a link; the room's link settings."""


def _link_action(action: str, text: str) -> None:
    """``link ACTION ID``: freeze, thaw and close differ only in what they do."""

    @link_command.command(action, help=sentence(text))
    @LINK_ID
    @as_option
    def command(id: int, as_name: str | None) -> int:
        return cmd_link(action=action, id=id, as_name=as_name)


_link_action("freeze", "stop crossings; outputs are held until a thaw")
_link_action("thaw", "reopen a frozen link (operator): held outputs cross")
_link_action("close", "sever a link (operator, or its initiator)")


@link_command.command("grant")
@LINK_ID
@click.argument("count", metavar="COUNT", type=COUNT, help="how many more crossings")
@as_option
def _link_grant(id: int, count: int, as_name: str | None) -> int:
    """Give a link COUNT more crossings (operator)."""
    return cmd_link_grant(id=id, count=count, as_name=as_name)


@link_command.command("settings")
@click.option("--budget", type=COUNT, help="crossings per new link (default 8)")
@click.option(
    "--budget-window",
    metavar="DURATION",
    help="how long a closed link's spent crossings carry to the pair's next link (1h)",
)
@click.option("--loop", metavar="N/SECONDS", help="loop breaker, e.g. 6/60, or off")
@click.option(
    "--checkpoint-pattern",
    multiple=True,
    metavar="REGEX",
    help="a prompt matching it starts a checkpoint turn, which never crosses (repeat)",
)
@click.option("--default-patterns", is_flag=True, help="back to the room's own patterns")
@click.option(
    "--sever-grace",
    type=float,
    metavar="SECONDS",
    help="how long an ended session may be resumed before its links are severed (30)",
)
@json_option
def _link_settings(
    budget: int | None,
    budget_window: str | None,
    loop: str | None,
    checkpoint_pattern: tuple[str, ...],
    default_patterns: bool,
    sever_grace: float | None,
    as_json: bool,
) -> int:
    """Show or change budget, loop breaker, checkpoints."""
    return cmd_link_settings(
        budget=budget,
        budget_window=budget_window,
        loop=loop,
        checkpoint_patterns=list(checkpoint_pattern) or None,
        default_patterns=default_patterns,
        sever_grace=sever_grace,
        as_json=as_json,
    )


@click.group("timer", cls=Group, subcommand_metavar="INTENT")
def timer_command() -> None:
    """Set a timer with intent (anchor, check, wait) or cancel one."""


def _timer_intent(intent: str, text: str) -> None:
    """``timer INTENT DURATION TEXT...``: the intents differ only in what they remind of."""

    @timer_command.command(intent, help=sentence(text))
    @click.argument("duration", metavar="DURATION", help="e.g. 90s, 5m, 1h, 1h30m")
    @click.argument(
        "text", metavar="TEXT", nargs=-1, required=True, help="what to do when it fires"
    )
    @as_option
    def command(duration: str, text: tuple[str, ...], as_name: str | None) -> int:
        return cmd_timer(intent=intent, duration=duration, text=text, as_name=as_name)


_timer_intent("anchor", "return to your own work when it fires (always keep one)")
_timer_intent("check", "look at a peer's status when it fires")
_timer_intent("wait", "check whether an answer arrived when it fires")


@timer_command.command("cancel")
@click.argument("id", metavar="ID", type=MESSAGE_ID, help="the timer's id (timers lists them)")
@as_option
def _timer_cancel(id: int, as_name: str | None) -> int:
    """Cancel a pending timer (its owner or the operator)."""
    return cmd_timer_cancel(id=id, as_name=as_name)


@click.command("timers")
@click.option("--all", "all_", is_flag=True, help="include fired and cancelled timers")
@json_option
def timers_command(all_: bool, as_json: bool) -> int:
    return cmd_timers(every=all_, as_json=as_json)
