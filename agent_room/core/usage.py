"""What the agents spend: token counts from the clients' own records, and what they cost.

Pure: the store hands in lines of a client's record file and rows it summed; this module
says which lines carry usage, what a model's tokens cost at a given price, which span of
time a budget counts, and how far a budget is spent. Each client records its usage in
its own way (checked on the pinned versions):

- **Claude Code** writes its transcript as one line per content block of an assistant
  message, each with the message's ``id``, ``model`` and ``usage`` (``input_tokens``,
  ``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``). The
  lines of one message repeat its usage, and the first may carry the output count so far
  (1) where a later one carries the final count: one message is one record, each count
  its largest. A subagent's messages are in its own transcript (``subagents/agent-*``)
  or, in older versions, in the main one marked ``isSidechain`` with an ``agentId``.
- **claude -p** prints a result with ``total_cost_usd`` and ``modelUsage`` (tokens and
  ``costUSD`` per model): the client's own price, kept as it is.
- **Codex** writes ``event_msg`` lines of type ``token_count`` into its session rollout
  (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``): ``last_token_usage`` is one
  model request (``input_tokens`` includes ``cached_input_tokens``), and
  ``total_token_usage`` the session's running total, which names a request uniquely (the
  client repeats an event now and then). The model is named by ``turn_context`` lines.
- **Gemini CLI** writes its chat (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) with
  a line per model answer, ``type: "gemini"``, its ``id``, ``model`` and ``tokens``
  (``input`` includes ``cached``; ``thoughts`` and ``tool`` are output the model made).

Tokens are stored in one shape, Anthropic's: ``input`` is the uncached input only, and
``cache_read`` and ``cache_write`` the cached input read and written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from agent_room.core.errors import BadInput

PRICES_KEY = "usage.prices"
"""The room setting that overrides models' prices: ``{model: Price as a dict}``."""
ROOM = "*room*"
"""A budget's scope for the whole room (never a name: names have no ``*``); also
``store.delivery.ROOM_BUDGET``."""
DAY = 86400.0
WARN_AT = 80
STOP_AT = 100
"""The two levels of a budget the operator hears of, in percent."""
MILLION = 1_000_000


class Client:
    """Which record a usage line came from."""

    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
    ASK = "claude -p"


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


@dataclass(frozen=True, slots=True)
class ReadState:
    """What a reader carries from one chunk of a record file to the next."""

    model: str | None = None
    """The model Codex's last ``turn_context`` named."""


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


_ANTHROPIC = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
"""The Messages API's four counts (transcripts, ``claude -p``'s ``usage``), in ``Tokens``' order."""
_CAMEL = ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")
"""The same four in ``claude -p``'s ``modelUsage``."""


def _tokens(usage: Mapping[str, Any], names: tuple[str, str, str, str]) -> Tokens:
    return Tokens(*(_int(usage.get(name)) for name in names))


def _dollars(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _epoch(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


_MARKS = (b'"usage"', b'"token_count"', b'"turn_context"', b'"tokens"')
"""A line without any of these carries no usage and is never decoded (most of a
transcript: tool results, file snapshots, the user's side)."""


def records_of_lines(
    lines: Iterable[bytes], state: ReadState = ReadState()
) -> tuple[list[Record], ReadState]:
    """The usage records in some lines of a client's record file, in order, and the
    state to read the next lines with. Lines of other kinds, or not JSON, are passed over."""
    found: list[Record] = []
    for line in lines:
        if not any(mark in line for mark in _MARKS):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "assistant":
            record = _claude(data)
        elif kind == "gemini":
            record = _gemini(data)
        elif kind == "turn_context":
            payload = data.get("payload")
            model = payload.get("model") if isinstance(payload, dict) else None
            if isinstance(model, str) and model:
                state = replace(state, model=model)
            continue
        elif kind == "event_msg":
            record = _codex(data, state.model)
        else:
            continue
        if record is not None:
            found.append(record)
    return found, state


def _claude(data: Mapping[str, Any]) -> Record | None:
    message = data.get("message")
    if not isinstance(message, dict):
        return None
    usage = message.get("usage")
    key = message.get("id") or data.get("requestId") or data.get("uuid")
    if not isinstance(usage, dict) or not isinstance(key, str):
        return None
    model = message.get("model")
    if model == "<synthetic>":  # the client's own notices: no request was made
        return None
    agent = data.get("agentId") if data.get("isSidechain") else None
    return Record(
        key=key,
        client=Client.CLAUDE,
        model=model if isinstance(model, str) else None,
        tokens=_tokens(usage, _ANTHROPIC),
        at=_epoch(data.get("timestamp")),
        agent_id=agent if isinstance(agent, str) else None,
    )


def _codex(data: Mapping[str, Any], model: str | None) -> Record | None:
    payload = data.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return None
    info = payload.get("info")
    if not isinstance(info, dict):
        return None  # the event before the first request carries no counts
    last, total = info.get("last_token_usage"), info.get("total_token_usage")
    if not isinstance(last, dict) or not isinstance(total, dict):
        return None
    cached = _int(last.get("cached_input_tokens"))
    written = _int(last.get("cache_write_input_tokens"))
    return Record(
        key=f"total:{_int(total.get('total_tokens'))}",
        client=Client.CODEX,
        model=model,
        tokens=Tokens(
            max(0, _int(last.get("input_tokens")) - cached - written),
            _int(last.get("output_tokens")),
            cached,
            written,
        ),
        at=_epoch(data.get("timestamp")),
    )


def _gemini(data: Mapping[str, Any]) -> Record | None:
    tokens = data.get("tokens")
    key = data.get("id")
    if not isinstance(tokens, dict) or not isinstance(key, str):
        return None
    cached = _int(tokens.get("cached"))
    model = data.get("model")
    return Record(
        key=key,
        client=Client.GEMINI,
        model=model if isinstance(model, str) else None,
        tokens=Tokens(
            max(0, _int(tokens.get("input")) - cached),
            _int(tokens.get("output")) + _int(tokens.get("thoughts")) + _int(tokens.get("tool")),
            cached,
            0,
        ),
        at=_epoch(data.get("timestamp")),
    )


_CONTEXT_SUFFIX = re.compile(r"\[[^\]]*\]$")


def ask_records(result: Mapping[str, Any], *, key: str, at: float) -> list[Record]:
    """The usage of one ``claude -p`` run, per model, from its result object: the
    client's ``modelUsage`` with its own ``costUSD`` (``total_cost_usd`` alone when the
    client gave no breakdown)."""
    per_model = result.get("modelUsage")
    found: list[Record] = []
    if isinstance(per_model, dict):
        for name, usage in per_model.items():
            if not isinstance(usage, dict):
                continue
            cost = usage.get("costUSD")
            found.append(
                Record(
                    key=f"{key}:{name}",
                    client=Client.ASK,
                    model=_CONTEXT_SUFFIX.sub("", str(name)),
                    tokens=_tokens(usage, _CAMEL),
                    at=at,
                    cost_usd=_dollars(cost),
                )
            )
    if not found:
        cost = result.get("total_cost_usd")
        usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        found.append(
            Record(
                key=key,
                client=Client.ASK,
                model=None,
                tokens=_tokens(usage, _ANTHROPIC),
                at=at,
                cost_usd=_dollars(cost),
            )
        )
    return found


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


def over_text(name: str, scope: str) -> str:
    """Why an agent's prompts wait: what ``who``, the console and a sender read."""
    whose = "the room's budget" if scope == ROOM else "its budget"
    return f"@{name} is over {whose}: the room holds its prompts until the operator raises it"


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
