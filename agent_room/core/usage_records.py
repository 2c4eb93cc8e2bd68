"""The clients' own records of their usage: which lines carry it, and in what shape.

Pure: the usage reader hands in whole lines of a record file; this module finds the
model requests in them. Each client records its usage in its own way (checked on the
pinned versions):

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
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from agent_room.core.usage import Record, Tokens


class Client:
    """Which record a usage line came from."""

    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
    ASK = "claude -p"


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
