"""The hook's input: typed, checked, tolerant of fields it does not know.

Claude Code adds fields between versions (``effort``, ``background_tasks`` ...); they are
kept out of the way, never a reason to fail. Standard library only.
"""

from __future__ import annotations

import json

from agent_room.core.records import Record

KNOWN_EVENTS = frozenset(
    {
        "SessionStart",
        "SessionEnd",
        "UserPromptSubmit",
        "Stop",
        "StopFailure",
        "Notification",
        "SubagentStop",
    }
)
MAX_PAYLOAD = 1 << 20
"""A payload over 1 MiB is refused whole: nothing the room needs is that large."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class HookProblem(Exception):
    """A payload the hook cannot use; logged, never raised to the agent."""


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

    DEFAULTS: ClassVar[dict[str, Any]] = dict.fromkeys(__slots__) | {"stop_hook_active": False}

    @classmethod
    def parse(cls, raw: bytes, event: str) -> HookPayload:
        """Parse stdin for ``event``; raise ``HookProblem`` naming what is wrong."""
        if event not in KNOWN_EVENTS:
            raise HookProblem(f"unknown event {event!r}")
        if len(raw) > MAX_PAYLOAD:
            raise HookProblem(f"payload over {MAX_PAYLOAD} bytes refused")
        if not raw.strip():
            raise HookProblem("empty stdin")
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HookProblem(f"invalid JSON on stdin: {exc}") from None
        if not isinstance(data, dict):
            raise HookProblem("payload is not a JSON object")
        named = _text(data, "hook_event_name")
        if named is not None and named != event:
            raise HookProblem(f"payload is for {named}, not {event}")
        active = data.get("stop_hook_active", False)
        return cls(
            event=event,
            session_id=_text(data, "session_id", required=True) or "",
            cwd=_text(data, "cwd"),
            transcript_path=_text(data, "transcript_path"),
            source=_text(data, "source"),
            reason=_text(data, "reason"),
            prompt=_text(data, "prompt"),
            prompt_id=_text(data, "prompt_id"),
            last_assistant_message=_text(data, "last_assistant_message"),
            stop_hook_active=active is True,
            notification_type=_text(data, "notification_type"),
            agent_id=_text(data, "agent_id"),
            agent_type=_text(data, "agent_type"),
            agent_transcript_path=_text(data, "agent_transcript_path"),
        )
