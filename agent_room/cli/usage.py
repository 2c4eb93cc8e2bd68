"""Handlers of what the agents spend: usage, usage price, budget.

Data to stdout (a table, or JSON with ``--json``), diagnostics to stderr. The figures
are what each host's watch (or console) read from its agents' record files; ``usage``
reads them again first for this host's agents, so a room without a watch is current too.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import click

from agent_room.cli import values
from agent_room.cli.output import print_json
from agent_room.cli.params import DOLLARS, Group, json_option, own
from agent_room.core.usage import (
    DAY,
    GROUPS,
    ROOM,
    Line,
    count,
    money,
    price_of,
    span_start,
)
from agent_room.room.budgets import Budgets
from agent_room.room.service import Room
from agent_room.room.usage import Usage
from agent_room.room.usage_report import Reports, Summary
from agent_room.store.settings import SettingsStore
from agent_room.turn.core import cost_rate
from agent_room.turn.core.budgets import over_text
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.printable import printable
from agent_room.turn.core.timers import parse_duration

READ_BUDGET = 3.0
"""Seconds ``usage`` spends reading what the watch has not read yet (a long backlog is
the watch's to work off; the command says how much is left)."""
_DAYS = re.compile(r"(\d{1,3})d")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def since_of(text: str | None, now: float) -> float:
    """The start of the span ``--since`` names: a duration back from now (``2h``,
    ``30d``), a date (``2026-11-01``, midnight UTC), or today (midnight UTC) when None."""
    if text is None:
        return span_start(now)
    raw = text.strip()
    if _DATE.fullmatch(raw):
        try:
            return datetime.strptime(raw, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
        except ValueError:
            raise BadInput(f"invalid date {text!r}: use YYYY-MM-DD") from None
    days = _DAYS.fullmatch(raw)
    if days and 0 < int(days.group(1)) <= 366:
        return now - int(days.group(1)) * DAY
    return now - parse_duration(raw)


def _span_of(text: str) -> float:
    days = _DAYS.fullmatch(text.strip())
    if days and 0 < int(days.group(1)) <= 366:
        return int(days.group(1)) * DAY
    return parse_duration(text)


def _open() -> tuple[Room, Usage]:
    room = Room.open(os.environ)
    return room, Usage(room)


def _row(line: Line) -> tuple[str, ...]:
    return (
        printable(line.key),
        str(line.requests),
        count(line.tokens.input),
        count(line.tokens.output),
        count(line.tokens.cache_read),
        count(line.tokens.cache_write),
        money(line.cost_usd, known=line.cost_known),
    )


def _side(name: str, side: dict[str, Any]) -> tuple[str, ...]:
    """One side of a link's exchange (from its JSON form), under the link's line."""
    cost = side["cost_usd"]
    return (
        f"  @{printable(name)}",
        str(side["requests"]),
        count(side["input_tokens"]),
        count(side["output_tokens"]),
        count(side["cache_read_tokens"]),
        count(side["cache_write_tokens"]),
        money(side["priced_cost_usd"], known=cost is not None),
    )


def _table(summary: Summary) -> str:
    header = ("", "REQUESTS", "INPUT", "OUTPUT", "CACHE-READ", "CACHE-WRITE", "COST")
    header = (summary.by.upper(), *header[1:])
    body: list[tuple[str, ...]] = []
    for line, detail in zip(summary.lines, summary.details, strict=True):
        body.append(_row(line))
        body += [_side(name, side) for name, side in sorted(detail.get("sides", {}).items())]
    table = [header, *body, _row(summary.total())]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table
    ]
    return "\n".join(lines) + "\n"


def cmd_usage(*, since: str | None, by: str, as_json: bool) -> int:
    """Tokens and cost over a span, by agent, model, link, day, handover, ask or subagent."""
    room, usage = _open()
    try:
        start_at = since_of(since, room.clock())
        usage.follow_live(budget=READ_BUDGET)  # this host's agents, up to now
        summary = Reports(room).summary(by, start_at)
        behind = usage.behind()
    finally:
        room.close()
    if behind:
        print(
            f"still reading the agents' records ({behind / 1e6:.1f} MB to go): the figures"
            " grow as the watch reads them",
            file=sys.stderr,
        )
    if as_json:
        print_json(summary.as_dict())
        return 0
    start = datetime.fromtimestamp(start_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    if not summary.lines:
        print(f"no usage since {start}", file=sys.stderr)
    else:
        sys.stdout.write(_table(summary))
        print(f"since {start}", file=sys.stderr)
        if not summary.total().cost_known:
            print(
                "?: a model without a known price (its tokens count, its cost does not);"
                " set one with agent-room usage price MODEL --input X --output Y",
                file=sys.stderr,
            )
    for name, scope in sorted(summary.over.items()):
        print(over_text("everyone" if name == ROOM else name, scope), file=sys.stderr)
    return 0


def cmd_usage_price(
    *,
    model: str,
    input_usd: float | None,
    output_usd: float | None,
    cache_read: float | None,
    cache_write: float | None,
    clear: bool,
) -> int:
    """Set or clear the room's price of a model (dollars per million tokens)."""
    room, usage = _open()
    try:
        if clear:
            usage.set_price(model, None)
            print(f"{printable(model)}: the price source's price again", file=sys.stderr)
            return 0
        if input_usd is None or output_usd is None:
            raise BadInput("a price needs --input and --output (dollars per million tokens)")
        price = price_of(
            {
                "input": input_usd,
                "output": output_usd,
                "cache_read": cache_read,
                "cache_write": cache_write,
            }
        )
        repriced = usage.set_price(model, price)
    finally:
        room.close()
    print(
        f"{printable(model)}: ${price.input:g} input, ${price.output:g} output per"
        f" million tokens; {repriced} stored requests repriced",
        file=sys.stderr,
    )
    return 0


def cmd_usage_prices(*, as_json: bool) -> int:
    """The room's price overrides."""
    room, usage = _open()
    try:
        found = {model: price.as_dict() for model, price in usage.overrides().items()}
    finally:
        room.close()
    if as_json:
        print_json(found)
    elif not found:
        print("no prices set: every price is the price source's (genai-prices)", file=sys.stderr)
    for model, price in sorted(found.items()) if not as_json else ():
        parts = ", ".join(
            f"{k.replace('_', '-')} ${v:g}" for k, v in price.items() if v is not None
        )
        print(f"{printable(model)}  {parts} per million tokens")
    return 0


def cmd_budget(*, as_json: bool) -> int:
    """Every budget and what its scope spent in the current span."""
    room, usage = _open()
    try:
        usage.follow_live(budget=READ_BUDGET)
        budgets = Budgets(room)
        budgets.check()
        found = budgets.rows()
    finally:
        room.close()
    if as_json:
        print_json(found)
        return 0
    if not found:
        print("no budgets set (agent-room budget set NAME AMOUNT)", file=sys.stderr)
        return 0
    for row in found:
        span = "day" if row["span_s"] == DAY else f"{row['span_s'] / 3600:g} h"
        held = "  HOLDING its prompts" if row["held"] else ""
        percent = f" ({row['percent']:g} %)" if row["percent"] is not None else ""
        print(
            f"{printable(row['label'])}  {money(row['spent_usd'])} of"
            f" ${row['limit_usd']:.2f} per {span}{percent}{held}"
        )
    return 0


def cmd_budget_set(*, name: str | None, amount: float, room: bool, per: str | None) -> int:
    """Set the budget of an agent or of the room."""
    scope = _scope(name, room=room)
    opened = Room.open(os.environ)
    try:
        budget = Budgets(opened).set(scope, amount, _span_of(per) if per else DAY)
    finally:
        opened.close()
    span = "day (UTC)" if budget.span == DAY else f"{budget.span / 3600:g} h"
    print(f"{budget.label}: ${budget.limit_usd:.2f} per {span}", file=sys.stderr)
    return 0


def cmd_budget_clear(*, name: str | None, room: bool) -> int:
    """Remove a budget."""
    scope = _scope(name, room=room)
    opened = Room.open(os.environ)
    try:
        Budgets(opened).clear(scope)
    finally:
        opened.close()
    print(f"{'the room' if scope is None else '@' + scope}: no budget", file=sys.stderr)
    return 0


def cmd_budget_pair(*, rate: str | None, as_json: bool) -> int:
    """Show or change the loop breaker's cost rate: two agents messaging each other."""
    room = Room.open(os.environ)
    try:
        links = SettingsStore(room.store)
        if rate is not None:
            limit, window = _rate(rate)
            links.save(
                {cost_rate.LIMIT_KEY: limit, cost_rate.WINDOW_KEY: window},
                at=room.clock(),
                by="operator",
            )
        limit, window = cost_rate.settings_from(links.settings())
    finally:
        room.close()
    if as_json:
        print_json({"limit_usd": limit, "window_s": window})
    else:
        print(f"loop breaker on cost: {cost_rate.describe(limit, window)}")
    return 0


def _rate(text: str) -> tuple[float, float]:
    """``USD/DURATION`` (``5/10m``) or ``off``."""
    if text.strip().lower() == "off":
        return 0.0, cost_rate.DEFAULT_WINDOW
    amount, slash, span = text.partition("/")
    try:
        limit = float(amount.strip().removeprefix("$"))
    except ValueError:
        limit = -1.0
    if not slash or not limit > 0 or limit > 1e9:
        raise BadInput(f"invalid rate {text!r}: use dollars/duration, e.g. 5/10m, or off")
    return limit, parse_duration(span)


def _scope(name: str | None, *, room: bool) -> str | None:
    """The agent a budget is of; None for the whole room (``--room``)."""
    if room == bool(name):
        raise BadInput("name an agent, or give --room for the whole room (one of them)")
    return None if room else str(name).removeprefix("@")


# The commands: usage, usage price|prices, budget, budget set|pair|clear (loaded by cli.app).


@click.group("usage", cls=Group, invoke_without_command=True)
@click.option(
    "--since",
    metavar="WHEN",
    help="a duration back from now (2h, 7d, 30d) or a date (2026-11-01); default today",
)
@click.option(
    "--by",
    type=click.Choice(GROUPS),
    default="agent",
    help="what to sum over (default agent)",
)
@json_option
@click.pass_context
def usage_command(ctx: click.Context, since: str | None, by: str, as_json: bool) -> int:
    return own(ctx, lambda: cmd_usage(since=since, by=by, as_json=as_json))


def _price_option(option: str) -> Callable[[Any], Any]:
    help_text = f"dollars per million {option.replace('-', ' ')} tokens"
    if option.startswith("cache"):
        help_text += " (default: as input)"
    return click.option(f"--{option}", type=DOLLARS, metavar="USD", help=help_text)


@usage_command.command("price")
@click.argument("model", metavar="MODEL", help="the model as the client names it")
@_price_option("input")
@_price_option("output")
@_price_option("cache-read")
@_price_option("cache-write")
@click.option("--clear", is_flag=True, help="back to the price source's price")
def _price(
    model: str,
    input: float | None,
    output: float | None,
    cache_read: float | None,
    cache_write: float | None,
    clear: bool,
) -> int:
    """Set the room's price of a model (overrides genai-prices)."""
    return cmd_usage_price(
        model=model,
        input_usd=input,
        output_usd=output,
        cache_read=cache_read,
        cache_write=cache_write,
        clear=clear,
    )


@usage_command.command("prices")
@json_option
def _prices(as_json: bool) -> int:
    """The prices the room sets."""
    return cmd_usage_prices(as_json=as_json)


@click.group("budget", cls=Group, invoke_without_command=True)
@json_option
@click.pass_context
def budget_command(ctx: click.Context, as_json: bool) -> int:
    return own(ctx, lambda: cmd_budget(as_json=as_json))


@budget_command.command(
    "set",
    # a negative amount is an amount (refused as one), not an unknown option
    context_settings={"ignore_unknown_options": True},
)
@click.argument(
    "words",
    metavar="[NAME] USD",
    nargs=-1,
    required=True,
    help="the agent (or --room), and dollars per span",
)
@click.option("--room", is_flag=True, help="the whole room's budget")
@click.option("--per", metavar="SPAN", help="the span: 1d (default), 12h, 7d ...")
def _set(words: tuple[str, ...], room: bool, per: str | None) -> int:
    """Set (or raise) a budget."""
    if len(words) > 2:
        raise click.UsageError(f"unexpected words: {' '.join(words[2:])}")
    name = words[0] if len(words) == 2 else None
    try:
        amount = values.dollars(words[-1])
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'USD'") from None
    return cmd_budget_set(name=name, amount=amount, room=room, per=per)


@budget_command.command("pair")
@click.argument("rate", metavar="USD/SPAN", required=False, help="e.g. 5/10m (the default), or off")
@json_option
def _pair(rate: str | None, as_json: bool) -> int:
    """The loop breaker on cost: what two agents messaging each other may spend."""
    return cmd_budget_pair(rate=rate, as_json=as_json)


@budget_command.command("clear")
@click.argument("name", metavar="NAME", required=False, help="the agent (or --room)")
@click.option("--room", is_flag=True, help="the whole room's budget")
def _clear(name: str | None, room: bool) -> int:
    """Remove a budget."""
    return cmd_budget_clear(name=name, room=room)
