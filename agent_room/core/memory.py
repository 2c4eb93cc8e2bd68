"""The room's memory of a session: items drawn from its transcript, and a handover context.

A transcript is long and mostly noise to whoever takes the work over. What helps is
what the sender did and decided: the files it read and changed, the commands it ran
(all three from its tool calls), what it wrote and was asked (its recent turns), the
decisions it stated and what it left open. Each becomes an ``Item``; a handover's
context is the items most relevant to the handover's task (relevance from SQLite FTS5's
bm25, computed by the store) and the most recent ones, within a token budget.

Tokens are estimated as one per four characters (rounded up), the usual rule of thumb
for English text and code with Claude's tokenizer; a context is held to its budget by
that estimate, header included.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_room.core.transcript import Entry, EntryKind, one_line, parse_line
from agent_room.turn.core.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

DEFAULT_BUDGET = 5000
"""Tokens a handover context may take (seed 002's ``tokenBudget``), unless the room's
setting (``BUDGET_KEY``) says otherwise."""
BUDGET_KEY = "memory.budget"
BUDGET_RANGE = (100, 1_000_000)
"""The budgets the operator may set: below 100 tokens the header leaves no room for an
item; a million is a large model's whole context window."""
CHARS_PER_TOKEN = 4
ITEM_WIDTH = 1200
"""Characters an item keeps: a long answer is cut, the rest of the budget serves others."""
HALF_LIFE = 40
"""Items back from the newest at which recency counts half."""
RELEVANCE_WEIGHT = 0.6
"""Relevance's share of an item's score; recency has the rest."""

READ_TOOLS = frozenset({"Read", "NotebookRead"})
CHANGE_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
COMMAND_TOOLS = frozenset({"Bash"})

_DECISION = re.compile(
    r"\b(?:decided|decision|(?:we|i)(?:'ll| will) (?:use|go with|keep)"
    r"|chose|choosing|going with|settled on|instead of)\b",
    re.IGNORECASE,
)
_OPEN = re.compile(
    r"\b(?:todo|fixme|still (?:need|needs|to|have to|fails?|failing)|remaining|next steps?"
    r"|not yet|open question|left to do|follow[- ]up|blocked|unresolved)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z0-9_]{3,}")


class Kind:
    """What an item is; also the section it is shown under."""

    PROMPT = "prompt"
    SAID = "said"
    READ = "read"
    CHANGED = "changed"
    COMMAND = "command"
    DECISION = "decision"
    OPEN = "open"
    COMPACTED = "compacted"
    """The conversation was compacted here: what came before is the summary's."""


SECTIONS = (
    (Kind.CHANGED, "Files changed"),
    (Kind.READ, "Files read"),
    (Kind.COMMAND, "Commands run"),
    (Kind.DECISION, "Decisions"),
    (Kind.OPEN, "Open items"),
)
"""Sections of a context before its recent turns, in the order shown."""


@dataclass(frozen=True, slots=True)
class Item:
    """One remembered piece of a session."""

    kind: str
    text: str
    at: str | None = None
    path: str | None = None
    """The file, for ``read`` and ``changed``."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A stored item offered for a context: its place in the session and its bm25."""

    seq: int
    kind: str
    text: str
    bm25: float | None = None
    """SQLite's bm25 (lower is more relevant); None when the item did not match."""


@dataclass(frozen=True, slots=True)
class Context:
    """A prepared context: its text, what it holds and what it cost."""

    text: str
    tokens: int
    items: int
    offered: int


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes, by the rule of four characters a token."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _path(entry: Entry) -> str | None:
    for key in ("file_path", "notebook_path", "path"):
        value = entry.tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _statements(text: str) -> list[Item]:
    found: list[Item] = []
    for sentence in _SENTENCE.split(text):
        line = sentence.strip().lstrip("-*• ").strip()
        if len(line) < 12 or line.startswith("#") or line.endswith(":"):
            continue  # a heading or a lead-in says nothing by itself
        if _OPEN.search(line):
            found.append(Item(Kind.OPEN, one_line(line, 300)))
        elif _DECISION.search(line):
            found.append(Item(Kind.DECISION, one_line(line, 300)))
    return found


def items_from(entries: Iterable[Entry]) -> list[Item]:
    """The items of a stretch of a transcript, in order."""
    found: list[Item] = []
    for entry in entries:
        if entry.kind is EntryKind.COMPACTED:
            found.append(Item(Kind.COMPACTED, "(the conversation was compacted)", entry.at))
        elif entry.kind is EntryKind.PROMPT:
            found.append(Item(Kind.PROMPT, one_line(entry.text, ITEM_WIDTH), entry.at))
        elif entry.kind is EntryKind.TEXT:
            found.append(Item(Kind.SAID, one_line(entry.text, ITEM_WIDTH), entry.at))
            found += [Item(i.kind, i.text, entry.at) for i in _statements(entry.text)]
        elif entry.kind is EntryKind.TOOL_USE:
            path = _path(entry)
            if entry.tool in CHANGE_TOOLS and path:
                found.append(Item(Kind.CHANGED, path, entry.at, path))
            elif entry.tool in READ_TOOLS and path:
                found.append(Item(Kind.READ, path, entry.at, path))
            elif entry.tool in COMMAND_TOOLS and entry.text:
                found.append(Item(Kind.COMMAND, one_line(entry.text, 300), entry.at))
    return found


def snapshot_files(line: str) -> list[Item]:
    """The files of a ``file-history-snapshot`` line: the client backs a file up before
    its agent first edits it, so these are files the session changed."""
    try:
        record = json.loads(line)
    except ValueError:
        return []
    snapshot = record.get("snapshot") if isinstance(record, dict) else None
    backups = snapshot.get("trackedFileBackups") if isinstance(snapshot, dict) else None
    at = snapshot.get("timestamp") if isinstance(snapshot, dict) else None
    if not isinstance(backups, dict):
        return []
    return [
        Item(Kind.CHANGED, str(p), at if isinstance(at, str) else None, str(p)) for p in backups
    ]


def items_of_lines(lines: Iterable[str | bytes]) -> list[Item]:
    """The items of whole transcript lines, a file changed listed once among them."""
    found: list[Item] = []
    changed: set[str] = set()
    for line in lines:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if '"file-history-snapshot"' in text[:100]:
            new = snapshot_files(text)
        else:
            new = items_from(parse_line(text))
        for item in new:
            if item.kind == Kind.CHANGED:
                if item.text in changed:
                    continue
                changed.add(item.text)
            found.append(item)
    return found


def match_query(*texts: str, limit: int = 32) -> str | None:
    """An FTS5 query matching any word of ``texts`` (three characters or more), quoted so
    that no word is read as FTS5 syntax; None when there is no word."""
    words: list[str] = []
    for text in texts:
        for word in _WORD.findall(text):
            lower = word.lower()
            if lower not in words:
                words.append(lower)
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words[:limit])


def score(candidate: Candidate, newest: int, best: float) -> float:
    """Relevance (bm25 relative to the best match) and recency (halving every
    ``HALF_LIFE`` items back), weighted together."""
    relevance = 0.0
    if candidate.bm25 is not None and best < 0:
        relevance = min(1.0, candidate.bm25 / best)
    recency: float = 0.5 ** ((newest - candidate.seq) / HALF_LIFE)
    return RELEVANCE_WEIGHT * relevance + (1 - RELEVANCE_WEIGHT) * recency


def _line(candidate: Candidate) -> str:
    if candidate.kind == Kind.PROMPT:
        return f"- asked: {candidate.text}"
    if candidate.kind == Kind.SAID:
        return f"- said: {candidate.text}"
    return f"- {candidate.text}"


def check_budget(tokens: int) -> int:
    """``tokens`` if the operator may set it as the budget, else why not."""
    least, most = BUDGET_RANGE
    if not least <= tokens <= most:
        raise BadInput(f"invalid budget {tokens}: use {least} to {most:,} tokens")
    return tokens


def header(sender: str, items: int, offered: int, budget: int) -> str:
    """The first lines of a context: whose it is and how it was chosen."""
    return (
        f"## Context from @{sender}'s session\n"
        f"{items} of {offered} remembered items, chosen for this handover's task and"
        f" recency within {budget} tokens (estimated as characters / {CHARS_PER_TOKEN}).\n"
    )


def build_context(
    sender: str, candidates: Sequence[Candidate], budget: int = DEFAULT_BUDGET
) -> Context:
    """The best-scoring candidates that fit ``budget``, shown by section, turns last.

    Greedy by score: each candidate is taken if its line still fits, so one long turn
    never crowds out the short lines about files and commands. A file or command is
    shown once, however often it recurs.
    """
    shown = {kind for kind, _title in SECTIONS} | {Kind.PROMPT, Kind.SAID}
    unique: dict[tuple[str, str], Candidate] = {}
    for candidate in candidates:
        if candidate.kind not in shown:
            continue
        key = (candidate.kind, candidate.text)
        kept = unique.get(key)
        if kept is not None:
            scores = [b for b in (kept.bm25, candidate.bm25) if b is not None]
            seq = max(kept.seq, candidate.seq)
            unique[key] = Candidate(seq, kept.kind, kept.text, min(scores, default=None))
        else:
            unique[key] = candidate
    pool = list(unique.values())
    if not pool:
        text = header(sender, 0, 0, budget) + "(nothing remembered from this session yet)\n"
        return Context(text, estimate_tokens(text), 0, 0)
    newest = max(c.seq for c in pool)
    best = min((c.bm25 for c in pool if c.bm25 is not None), default=0.0)
    ranked = sorted(pool, key=lambda c: (-score(c, newest, best), -c.seq))
    fixed = estimate_tokens(header(sender, len(pool), len(pool), budget))
    fixed += sum(estimate_tokens(f"\n### {title}\n") for _k, title in SECTIONS)
    fixed += estimate_tokens("\n### Recent turns\n")
    spent = fixed
    chosen: list[Candidate] = []
    for candidate in ranked:
        cost = estimate_tokens(_line(candidate) + "\n")
        if spent + cost <= budget:
            chosen.append(candidate)
            spent += cost
    text = _render(sender, chosen, len(pool), budget)
    return Context(text, estimate_tokens(text), len(chosen), len(pool))


def _render(sender: str, chosen: list[Candidate], offered: int, budget: int) -> str:
    parts = [header(sender, len(chosen), offered, budget)]
    by_seq = sorted(chosen, key=lambda c: c.seq)
    for kind, title in SECTIONS:
        lines = [_line(c) for c in by_seq if c.kind == kind]
        if lines:
            parts.append(f"\n### {title}\n" + "\n".join(lines) + "\n")
    turns = [_line(c) for c in by_seq if c.kind in (Kind.PROMPT, Kind.SAID)]
    if turns:
        parts.append("\n### Recent turns\n" + "\n".join(turns) + "\n")
    return "".join(parts)
