"""Claude Code transcripts (JSONL): the lines that matter, and the turns they make.

A transcript holds one JSON object per line: prompts and tool results (``type: user``),
the model's text and tool calls (``type: assistant``, one content block a line in recent
clients, several in older ones), and bookkeeping (``progress``, ``system``, ``attachment``,
``api-request-blob`` ...), which is skipped. Lines of Claude's own subagents
(``isSidechain``) and the client's meta lines (``isMeta``) are not the session's
conversation. Thinking blocks stay private: peers read what the agent said and did.

This module parses lines given to it (a reader in ``adapters.transcripts`` finds them);
it does no I/O, and a line that is not JSON (the cut first line of a tail) is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

SUMMARY_WIDTH = 160
"""Characters of a tool call's summarised input."""

_INPUT_KEYS = (
    "command",
    "file_path",
    "pattern",
    "path",
    "url",
    "query",
    "description",
    "prompt",
    "notebook_path",
)
"""The input field that says most about a call, in order of preference."""

_INTERRUPTED = "[Request interrupted by user"
_SKIPPED_PROMPTS = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>")


class EntryKind(StrEnum):
    """What one parsed piece of a transcript is."""

    PROMPT = "prompt"
    """A prompt from the user (or typed into the agent's pane by the room)."""
    TEXT = "text"
    """Text the agent wrote."""
    TOOL_USE = "tool_use"
    TOOL_ERROR = "tool_error"
    """A tool call's result came back as an error (or was refused)."""
    INTERRUPTED = "interrupted"
    COMPACTED = "compacted"
    """The conversation was summarised and continues from the summary."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One piece of the conversation, in transcript order."""

    kind: EntryKind
    text: str = ""
    """The prompt or text; for a tool call, its input summarised."""
    at: str | None = None
    """The line's ISO timestamp, as the client wrote it."""
    tool: str = ""
    """The tool's name (tool calls)."""
    tool_id: str = ""
    """Pairs a call with its result."""
    tool_input: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool the agent called, with its input summarised on one line."""

    name: str
    summary: str
    failed: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a turn after its prompt: text written, or a tool called."""

    text: str = ""
    tool: ToolCall | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """A prompt and everything the agent did about it, up to the next prompt."""

    prompt: str | None
    """``None`` when the turn's start was not among the lines parsed (a tail)."""
    at: str | None
    steps: tuple[Step, ...] = ()
    interrupted: bool = False
    compacted: bool = False
    """The conversation was compacted before this prompt."""

    @property
    def texts(self) -> tuple[str, ...]:
        """What the agent wrote, without its tool calls."""
        return tuple(s.text for s in self.steps if s.tool is None)

    @property
    def tools(self) -> tuple[ToolCall, ...]:
        """The tool calls, in order."""
        return tuple(s.tool for s in self.steps if s.tool is not None)

    def to_json(self, *, tools: bool) -> dict[str, Any]:
        """The turn as plain data for ``--json``."""
        data: dict[str, Any] = {
            "prompt": self.prompt,
            "at": self.at,
            "text": "\n\n".join(self.texts),
            "interrupted": self.interrupted,
            "compacted": self.compacted,
        }
        if tools:
            data["tools"] = [
                {"name": t.name, "input": t.summary, "failed": t.failed} for t in self.tools
            ]
        return data


def one_line(text: str, width: int = SUMMARY_WIDTH) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def summarise_input(tool_input: Any) -> str:
    """A tool call's input on one line: its telling field, else the whole input as JSON."""
    if not isinstance(tool_input, dict):
        return one_line(str(tool_input))
    for key in _INPUT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value)
    if not tool_input:
        return ""
    return one_line(json.dumps(tool_input, ensure_ascii=False, sort_keys=True))


def _prompt_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict)]
        kinds = {b.get("type") for b in content if isinstance(b, dict)}
        if kinds <= {"text", "image"} and texts:
            return "\n".join(t for t in texts if isinstance(t, str))
    return None


def _slash_command(text: str) -> str | None:
    """``/name args`` from the client's ``<command-name>`` wrapping of a slash command."""
    if "<command-name>" not in text:
        return None
    name = text.split("<command-name>", 1)[1].split("</command-name>", 1)[0].strip()
    args = ""
    if "<command-args>" in text:
        args = text.split("<command-args>", 1)[1].split("</command-args>", 1)[0].strip()
    return f"{name} {args}".strip()


def _user_entries(record: dict[str, Any], at: str | None) -> list[Entry]:
    content = (record.get("message") or {}).get("content")
    if record.get("isCompactSummary"):
        return [Entry(EntryKind.COMPACTED, at=at)]
    text = _prompt_text(content)
    if text is not None:
        if text.startswith(_INTERRUPTED):
            return [Entry(EntryKind.INTERRUPTED, at=at)]
        if text.lstrip().startswith(_SKIPPED_PROMPTS):
            return []
        command = _slash_command(text)
        return [Entry(EntryKind.PROMPT, command if command is not None else text, at=at)]
    found: list[Entry] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result" and block.get("is_error"):
            found.append(Entry(EntryKind.TOOL_ERROR, at=at, tool_id=str(block.get("tool_use_id"))))
        elif block.get("type") == "text" and str(block.get("text", "")).startswith(_INTERRUPTED):
            found.append(Entry(EntryKind.INTERRUPTED, at=at))
    return found


def _assistant_entries(record: dict[str, Any], at: str | None) -> list[Entry]:
    content = (record.get("message") or {}).get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    found: list[Entry] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            found.append(Entry(EntryKind.TEXT, str(block["text"]).strip(), at=at))
        elif kind == "tool_use":
            name = str(block.get("name") or "?")
            tool_input = block.get("input")
            found.append(
                Entry(
                    EntryKind.TOOL_USE,
                    summarise_input(tool_input),
                    at=at,
                    tool=name,
                    tool_id=str(block.get("id") or ""),
                    tool_input=tool_input if isinstance(tool_input, dict) else {},
                )
            )
    return found


def parse_line(line: str | bytes) -> list[Entry]:
    """The conversation pieces of one transcript line (none for bookkeeping or bad JSON)."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    if '"user"' not in text and '"assistant"' not in text:
        return []  # most bookkeeping lines, some of them large, are never decoded
    try:
        record = json.loads(text)
    except ValueError:
        return []
    if not isinstance(record, dict) or record.get("isSidechain") or record.get("isMeta"):
        return []
    at = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
    if record.get("type") == "user":
        return _user_entries(record, at)
    if record.get("type") == "assistant":
        return _assistant_entries(record, at)
    return []


def parse_lines(lines: Iterable[str | bytes]) -> list[Entry]:
    """The conversation pieces of many lines, in order."""
    return [entry for line in lines for entry in parse_line(line)]


class _Building:
    """A turn being gathered (mutable until frozen into a ``Turn``)."""

    def __init__(self, prompt: str | None, at: str | None, compacted: bool) -> None:
        self.prompt = prompt
        self.at = at
        self.compacted = compacted
        self.steps: list[Step] = []
        self.calls: dict[str, int] = {}
        self.interrupted = False

    def add(self, entry: Entry) -> None:
        if entry.kind is EntryKind.TEXT:
            self.steps.append(Step(text=entry.text))
        elif entry.kind is EntryKind.TOOL_USE:
            self.calls[entry.tool_id] = len(self.steps)
            self.steps.append(Step(tool=ToolCall(entry.tool, entry.text)))
        elif entry.kind is EntryKind.TOOL_ERROR and entry.tool_id in self.calls:
            index = self.calls[entry.tool_id]
            call = self.steps[index].tool
            assert call is not None
            self.steps[index] = Step(tool=ToolCall(call.name, call.summary, failed=True))
        elif entry.kind is EntryKind.INTERRUPTED:
            self.interrupted = True

    def freeze(self) -> Turn:
        return Turn(self.prompt, self.at, tuple(self.steps), self.interrupted, self.compacted)

    def empty(self) -> bool:
        return self.prompt is None and not self.steps and not self.interrupted


def group_turns(entries: Iterable[Entry]) -> list[Turn]:
    """Turns from entries: each prompt starts one; pieces before the first prompt make a
    turn whose prompt is unknown (``None``)."""
    turns: list[Turn] = []
    current = _Building(None, None, compacted=False)
    compacted = False
    for entry in entries:
        if entry.kind is EntryKind.COMPACTED:
            compacted = True
        elif entry.kind is EntryKind.PROMPT:
            if not current.empty():
                turns.append(current.freeze())
            current = _Building(entry.text, entry.at, compacted)
            compacted = False
        else:
            if current.at is None:
                current.at = entry.at
            current.add(entry)
    if not current.empty():
        turns.append(current.freeze())
    return turns


def last_turns(lines: Iterable[str | bytes], count: int) -> list[Turn]:
    """The last ``count`` turns of the lines given, oldest first."""
    turns = group_turns(parse_lines(lines))
    return turns[-count:] if count > 0 else []


def whole_turns(turns: list[Turn]) -> int:
    """How many of ``turns`` begin with their prompt (a tail's first may not)."""
    return sum(1 for turn in turns if turn.prompt is not None)


def _clock(at: str | None) -> str:
    """``2026-02-10T21:11:56.846Z`` as ``2026-02-10 21:11:56``."""
    return at[:19].replace("T", " ") if at else "time unknown"


def render_turns(turns: list[Turn], *, tools: bool) -> str:
    """Turns as ``peek`` prints them: the prompt quoted with ``>``, the agent's text, and
    (with ``tools``) one line per tool call; without, how many calls were left out."""
    out: list[str] = []
    for index, turn in enumerate(turns, 1):
        out.append(f"--- turn {index}/{len(turns)} · {_clock(turn.at)} ---")
        if turn.compacted:
            out.append("(the conversation was compacted before this turn)")
        if turn.prompt is None:
            out.append("> (the turn's prompt lies before the part read)")
        else:
            out.extend(f"> {line}" for line in turn.prompt.splitlines() or [""])
        hidden = 0
        for step in turn.steps:
            if step.tool is None:
                out.append(step.text)
            elif tools:
                failed = "  (failed)" if step.tool.failed else ""
                out.append(f"  [{step.tool.name}] {step.tool.summary}{failed}".rstrip())
            else:
                hidden += 1
        if hidden:
            out.append(f"  ({hidden} tool call{'s' if hidden > 1 else ''}; --tools shows them)")
        if turn.interrupted:
            out.append("(interrupted)")
        out.append("")
    return "\n".join(out)
