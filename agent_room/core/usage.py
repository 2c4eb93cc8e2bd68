"""What the agents spend: tokens, prices, budgets, and how the operator reads them.

Pure: the store hands in rows it summed; this module says what tokens cost at a given
price, which span of time a budget counts, how far a budget is spent, and how a cost is
written. How each client records its usage, and reading those records, is
``core.usage_records``.

Tokens are kept in one shape, Anthropic's: ``input`` is the uncached input only, and
``cache_read`` and ``cache_write`` the cached input read and written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agent_room.turn.core.budgets import ROOM_BUDGET
from agent_room.turn.core.errors import BadInput

PRICES_KEY = "usage.prices"
"""The room setting that overrides models' prices: ``{model: Price as a dict}``."""
ROOM = ROOM_BUDGET
"""A budget's scope for the whole room (never a name: names have no ``*``)."""
DAY = 86400.0
WARN_AT = 80
STOP_AT = 100
"""The two levels of a budget the operator hears of, in percent."""
MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token counts in one shape for every client."""

    input: int = 0
    """Input not read from a cache."""
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        """Every token the model read or wrote."""
        return self.input + self.output + self.cache_read + self.cache_write

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    def __sub__(self, other: Tokens) -> Tokens:
        """What ``self`` adds to ``other`` (a running total's step; never below zero)."""
        return Tokens(
            max(0, self.input - other.input),
            max(0, self.output - other.output),
            max(0, self.cache_read - other.cache_read),
            max(0, self.cache_write - other.cache_write),
        )


@dataclass(frozen=True, slots=True)
class Record:
    """One model request's usage, as a client recorded it."""

    key: str
    """Unique within its session: the message id, or the running total for Codex."""
    client: str
    model: str | None
    tokens: Tokens
    at: float | None
    """When the client wrote it (seconds since the epoch), if it said."""
    agent_id: str | None = None
    """The subagent that made the request (Claude Code's sidechains)."""
    cost_usd: float | None = None
    """The client's own price of it, when it gives one (``claude -p``)."""


# -- prices ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Price:
    """A model's price in US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float | None = None
    """None: as input."""
    cache_write: float | None = None
    """None: as input."""

    def cost(self, tokens: Tokens) -> float:
        """What ``tokens`` cost at this price."""
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (
            tokens.input * self.input
            + tokens.output * self.output
            + tokens.cache_read * read
            + tokens.cache_write * write
        ) / MILLION

    def as_dict(self) -> dict[str, float | None]:
        """The setting's stored form."""
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }


def overrides_from(raw: object) -> dict[str, Price]:
    """The room's price overrides from their stored form; unusable entries are passed over."""
    found: dict[str, Price] = {}
    if not isinstance(raw, dict):
        return found
    for model, entry in raw.items():
        if not isinstance(entry, dict):
            continue
        try:
            found[str(model)] = price_of(entry)
        except BadInput:
            continue
    return found


def price_of(entry: Mapping[str, object]) -> Price:
    """A price from its parts (``BadInput`` for a negative or missing one)."""
    values: dict[str, float | None] = {}
    for part in ("input", "output", "cache_read", "cache_write"):
        value = entry.get(part)
        if value is None and part.startswith("cache"):
            values[part] = None
            continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise BadInput(f"a price needs a number for {part.replace('_', '-')}")
        if not math.isfinite(value) or value < 0:
            raise BadInput(f"invalid price {value!r} for {part.replace('_', '-')}")
        values[part] = float(value)
    return Price(
        values["input"] or 0.0, values["output"] or 0.0, values["cache_read"], values["cache_write"]
    )


# -- budgets -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Budget:
    """What one agent, or the room (``ROOM``), may spend over a span of time."""

    scope: str
    limit_usd: float
    span: float = DAY
    """Seconds; spans are counted from midnight UTC (a day: the UTC calendar day)."""

    @property
    def label(self) -> str:
        """The scope as the operator reads it."""
        return "the room" if self.scope == ROOM else f"@{self.scope}"


def span_start(now: float, span: float = DAY) -> float:
    """The start of the span ``now`` is in: spans follow each other from the epoch's
    midnight UTC, so a day's span is the UTC calendar day and every host agrees on it."""
    return math.floor(now / span) * span


def level(spent: float, limit: float) -> int:
    """The highest level (0, ``WARN_AT``, ``STOP_AT``) that ``spent`` reached."""
    if limit <= 0 or spent >= limit:
        return STOP_AT
    if spent >= limit * WARN_AT / 100:
        return WARN_AT
    return 0


def budget_text(budget: Budget, spent: float, reached: int, since: float) -> str:
    """The notification of a level reached: who, how much, and the command that acts."""
    day = datetime.fromtimestamp(since, UTC).strftime("%Y-%m-%d")
    money = f"${spent:.2f} of ${budget.limit_usd:.2f}"
    if reached >= STOP_AT:
        hold = (
            "; the room stops sending its agents their prompts"
            if budget.scope == ROOM
            else "; the room stops sending it its prompts"
        )
        return (
            f"{budget.label} spent its budget ({money} since {day}){hold}"
            f" (agent-room budget set {'--room' if budget.scope == ROOM else budget.scope}"
            " AMOUNT to raise it)"
        )
    return f"{budget.label} has spent {reached} % of its budget ({money} since {day})"


# -- the operator's view -----------------------------------------------------------------

GROUPS = ("agent", "model", "link", "day", "handover", "ask", "subagent")
"""What ``agent-room usage --by`` sums over."""


@dataclass(slots=True)
class Line:
    """One line of a usage summary: a group's tokens and what they cost."""

    key: str
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float = 0.0
    unpriced: int = 0
    """Requests of a model with no known price: their tokens count, their cost is unknown."""
    requests: int = 0

    def add(self, tokens: Tokens, cost: float | None, requests: int, unpriced: int) -> None:
        """Add a group of rows (``cost`` None when none of them had a price)."""
        self.tokens = self.tokens + tokens
        self.cost_usd += cost or 0.0
        self.requests += requests
        self.unpriced += unpriced

    @property
    def cost_known(self) -> bool:
        """Whether every request of the line had a price."""
        return self.unpriced == 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON form ``usage --json`` prints."""
        return {
            "key": self.key,
            "requests": self.requests,
            "input_tokens": self.tokens.input,
            "output_tokens": self.tokens.output,
            "cache_read_tokens": self.tokens.cache_read,
            "cache_write_tokens": self.tokens.cache_write,
            "total_tokens": self.tokens.total,
            "cost_usd": round(self.cost_usd, 6) if self.cost_known else None,
            "priced_cost_usd": round(self.cost_usd, 6),
            "unpriced_requests": self.unpriced,
        }


def money(cost: float | None, *, known: bool = True) -> str:
    """A cost as a column shows it: ``$0.42``, ``<$0.01``, ``?`` when unknown, and
    ``$0.42+`` when part of it is unknown."""
    if cost is None or (not known and not cost):
        return "?"
    text = "$0.00" if cost == 0 else ("<$0.01" if cost < 0.01 else f"${cost:,.2f}")
    return text if known else f"{text}+"


def count(tokens: int) -> str:
    """A token count in a narrow column: ``950``, ``12.3k``, ``4.1M``."""
    if tokens < 1000:
        return str(tokens)
    if tokens < MILLION:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens / MILLION:.1f}M"
