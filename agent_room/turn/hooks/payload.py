"""The hook's input: typed, checked, tolerant of fields it does not know.

Claude Code adds fields between versions (``effort``, ``background_tasks`` ...); they are
kept out of the way, never a reason to fail. A payload of any size is accepted: stdin is
read up to a limit (the rest drained unread), a payload cut there keeps the members that
came whole, and the free text (a prompt, a final answer) is kept to what the room stores,
so that a huge final answer still ends the turn. Standard library only.
"""

from __future__ import annotations

from agent_room.turn.core import fastjson
from agent_room.turn.core.records import Record

KNOWN_EVENTS = frozenset(
    {
        "SessionStart",
        "SessionEnd",
        "UserPromptSubmit",
        "Stop",
        "StopFailure",
        "Notification",
        "SubagentStop",
        "PreCompact",
    }
)
READ_LIMIT = 8 << 20
"""Bytes of stdin read at most; the rest is drained unread (the writer must not block)."""
TEXT_KEEP = 256 * 1024
"""Characters kept of a prompt or a final answer (the body limit: it may cross a link)."""
_TEXT_FIELDS = frozenset({"prompt", "last_assistant_message"})
"""The members a payload may be cut in, and still be kept (as far as they go)."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, ClassVar


class HookProblem(Exception):
    """A payload the hook cannot use; logged, never raised to the agent."""


def read_stdin(stdin: IO[bytes], limit: int = READ_LIMIT) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of stdin, and whether there was more (drained unread)."""
    raw = stdin.read(limit)
    cut = False
    while stdin.read(1 << 16):
        cut = True
    return raw, cut


def _cut_text(rest: str) -> str:
    """The text of a JSON string whose end was cut off (a cut escape is dropped)."""
    rest = rest[: TEXT_KEEP * 6]  # no more than the kept text can take, even escaped
    for trim in range(12):  # the longest escape is a surrogate pair, 12 characters
        try:
            text = fastjson.loads('"' + rest[: len(rest) - trim] + '"')
        except ValueError:
            continue
        assert isinstance(text, str)
        if text and "\ud800" <= text[-1] <= "\udbff":
            text = text[:-1]  # half of a pair, which no database takes
        return text
    return ""


def _prefix_members(text: str) -> dict[str, Any]:
    """The members of a JSON object cut off somewhere: those that came whole, and a text
    member cut in its value as far as it goes."""
    at = fastjson.skip_space(text, 0)
    if text[at : at + 1] != "{":
        raise HookProblem("payload is not a JSON object")
    found: dict[str, Any] = {}
    at += 1
    while True:
        at = fastjson.skip_space(text, at)
        if text[at : at + 1] != '"':
            return found
        try:
            key, at = fastjson.raw_decode(text, at)
        except ValueError:
            return found
        at = fastjson.skip_space(text, at)
        if text[at : at + 1] != ":":
            return found
        at = fastjson.skip_space(text, at + 1)
        try:
            found[key], at = fastjson.raw_decode(text, at)
        except ValueError:
            if key in _TEXT_FIELDS and text[at : at + 1] == '"':
                found[key] = _cut_text(text[at + 1 :])
            return found
        at = fastjson.skip_space(text, at)
        if text[at : at + 1] != ",":
            return found
        at += 1


def _decode(raw: bytes, cut: bool) -> dict[str, Any]:
    if not cut:
        try:
            data = fastjson.loads(raw)
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError among them
            raise HookProblem(f"invalid JSON on stdin: {exc}") from None
        if not isinstance(data, dict):
            raise HookProblem("payload is not a JSON object")
        return data
    import codecs

    try:  # the last character may be cut in half: it is left out
        text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=False)
    except UnicodeDecodeError as exc:
        raise HookProblem(f"invalid JSON on stdin: {exc}") from None
    return _prefix_members(text)


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise HookProblem(f"payload has no {key}")
        return None
    if not isinstance(value, str):
        raise HookProblem(f"payload field {key} is not a string")
    if required and not value.strip():
        raise HookProblem(f"payload field {key} is empty")
    return value


class HookPayload(Record):
    """The fields of a hook payload the room uses (a slots class: cheap to define)."""

    __slots__ = (
        "agent_id",
        "agent_transcript_path",
        "agent_type",
        "client",
        "cwd",
        "event",
        "last_assistant_message",
        "notification_type",
        "prompt",
        "prompt_id",
        "reason",
        "session_id",
        "source",
        "stop_hook_active",
        "transcript_path",
    )

    event: str
    session_id: str
    cwd: str | None
    transcript_path: str | None
    source: str | None
    reason: str | None
    prompt: str | None
    prompt_id: str | None
    last_assistant_message: str | None
    stop_hook_active: bool
    notification_type: str | None
    agent_id: str | None
    agent_type: str | None
    agent_transcript_path: str | None
    client: str
    """The client that fired the hook (``core.clients``): claude, codex or gemini."""

    DEFAULTS: ClassVar[dict[str, Any]] = dict.fromkeys(__slots__) | {
        "stop_hook_active": False,
        "client": "claude",
    }

    @classmethod
    def parse(
        cls, raw: bytes, event: str, *, cut: bool = False, client: str = "claude"
    ) -> HookPayload:
        """Parse stdin for ``event`` (``cut``: stdin went on past what was read); raise
        ``HookProblem`` naming what is wrong. Another ``client``'s event and payload are
        first put in the room's terms (``core.clients``): ``event`` is then the room's."""
        if client == "claude" and event not in KNOWN_EVENTS:
            raise HookProblem(f"unknown event {event!r}")
        if not raw.strip():
            raise HookProblem("empty stdin")
        data = _decode(raw, cut)
        if client != "claude":
            from agent_room.turn.core.clients import UnknownEvent, normalise

            try:
                event, data = normalise(client, event, data)
            except UnknownEvent as exc:
                raise HookProblem(str(exc)) from None
        named = _text(data, "hook_event_name")
        if named is not None and named != event:
            raise HookProblem(f"payload is for {named}, not {event}")
        active = data.get("stop_hook_active", False)
        prompt = _text(data, "prompt")
        answer = _text(data, "last_assistant_message")
        return cls(
            event=event,
            session_id=_text(data, "session_id", required=True) or "",
            cwd=_text(data, "cwd"),
            transcript_path=_text(data, "transcript_path"),
            source=_text(data, "source"),
            reason=_text(data, "reason"),
            prompt=prompt[:TEXT_KEEP] if prompt is not None else None,
            prompt_id=_text(data, "prompt_id"),
            last_assistant_message=answer[:TEXT_KEEP] if answer is not None else None,
            stop_hook_active=active is True,
            notification_type=_text(data, "notification_type"),
            agent_id=_text(data, "agent_id"),
            agent_type=_text(data, "agent_type"),
            agent_transcript_path=_text(data, "agent_transcript_path"),
            client=client,
        )
