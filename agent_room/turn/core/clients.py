"""The agent clients the room knows (Claude Code, Codex CLI, Gemini CLI): one description each.

What differs between clients lives here and nowhere else: the hook events each one fires
and the room event each maps onto, how a payload becomes the room's shape (Claude Code's,
which the rest of the room reads), how the room's answer becomes the client's, the pause
between typed text and Enter, and the commands that resume a session or run one headless.
After ``normalise`` nothing in the room knows which client spoke.

Facts measured with Codex CLI 0.169.0 and Gemini CLI 0.61.0 in tmux against a loopback
stand-in (see README): Codex fires SessionStart at the first prompt (not at launch),
PermissionRequest when an approval dialog opens and Interrupt when Escape stops a turn
(no Stop follows); Gemini's BeforeAgent and AfterAgent carry the prompt and the final text
(``prompt_response``), a cancelled turn ends with ``[no response text]``, a dialog fires
Notification ``ToolPermission`` and ``/quit`` fires SessionEnd three times. Pure and on
the standard library: the hook imports it on every turn.
"""

from __future__ import annotations

from agent_room.turn.core.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

PERMISSION_PROMPT = "permission_prompt"
"""The room's notification type for "a permission dialog is open" (Claude Code's name)."""
NO_RESPONSE = "[no response text]"
"""What Gemini CLI reports as a turn's final text when the turn was cancelled."""


class Client(Record):
    """One agent client: its hooks, its typing and its commands."""

    __slots__ = ("events", "headless", "kind", "settle", "title")

    kind: str
    title: str
    events: dict[str, str]
    """The client's hook events the room installs, each with the room event it maps onto."""
    settle: float
    """Seconds between typed text and Enter (an immediate Enter may become a newline)."""
    headless: bool
    """Whether ``ask`` can run it headless with resume (see ``headless_argv``)."""

    DEFAULTS: ClassVar[dict[str, Any]] = {"headless": False}


CLAUDE = Client(
    kind="claude",
    title="Claude Code",
    events={
        e: e
        for e in (
            "SessionStart",
            "UserPromptSubmit",
            "Notification",
            "Stop",
            "StopFailure",
            "SubagentStop",
            "SessionEnd",
        )
    },
    # Enter right after the text (no pause) was submitted 28 times of 28 by 2.1.330 and 20
    # of 20 by 2.1.197, through a kept control-mode client (its commands 0.05 ms apart)
    settle=0.0,
    headless=True,
)
CODEX = Client(
    kind="codex",
    title="Codex CLI",
    events={
        "SessionStart": "SessionStart",
        "UserPromptSubmit": "UserPromptSubmit",
        "PermissionRequest": "Notification",
        "Stop": "Stop",
        "Interrupt": "Interrupt",
        "SessionEnd": "SessionEnd",
    },
    # 0 ms lost the Enter 5 times of 5 (paste-burst heuristic), 20 ms and more worked; the
    # launcher also turns the heuristic off (tui.disable_paste_burst)
    settle=0.03,
    headless=True,
)
GEMINI = Client(
    kind="gemini",
    title="Gemini CLI",
    events={
        "SessionStart": "SessionStart",
        "BeforeAgent": "UserPromptSubmit",
        "Notification": "Notification",
        "AfterAgent": "Stop",
        "SessionEnd": "SessionEnd",
    },
    # an Enter within 30 ms of a typed key becomes a newline: 20 ms worked 1 time of 5
    settle=0.1,
)
CLIENTS = {c.kind: c for c in (CLAUDE, CODEX, GEMINI)}
DEFAULT_SETTLE = 0.05
"""For an agent kind the room has not measured (``--agent command``)."""


def client(kind: str) -> Client | None:
    """The description of a client kind, or None for one the room does not know."""
    return CLIENTS.get(kind)


def settle_for(kind: str) -> float:
    """The pause between the typed text and Enter for an agent kind."""
    known = CLIENTS.get(kind)
    return known.settle if known else DEFAULT_SETTLE


class UnknownEvent(ValueError):
    """A hook event the client's description does not list."""


def normalise(kind: str, event: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The room event and the payload in the room's (Claude Code's) shape.

    ``data`` is the client's payload as decoded; a payload naming another event than the
    one its hook was installed for is left as it is (the caller refuses it).
    """
    known = CLIENTS.get(kind)
    if known is None:
        raise UnknownEvent(f"unknown client {kind!r}")
    room_event = known.events.get(event)
    if room_event is None:
        raise UnknownEvent(f"unknown {known.title} event {event!r}")
    if kind == "claude" or data.get("hook_event_name", event) != event:
        return room_event, data
    data = dict(data, hook_event_name=room_event)
    if kind == "codex":
        if event == "PermissionRequest":
            data["notification_type"] = PERMISSION_PROMPT
        if "prompt_id" not in data and isinstance(data.get("turn_id"), str):
            data["prompt_id"] = data["turn_id"]
    elif kind == "gemini":
        if event == "Notification":
            notice = data.get("notification_type")
            data["notification_type"] = PERMISSION_PROMPT if notice == "ToolPermission" else notice
        elif event == "AfterAgent":
            answer = data.pop("prompt_response", None)
            if answer == NO_RESPONSE:  # Escape: the turn was cancelled, nothing to hand on
                return "Interrupt", dict(data, hook_event_name="Interrupt")
            data["last_assistant_message"] = answer
    return room_event, data


def client_output(kind: str, event: str, output: dict[str, Any]) -> dict[str, Any]:
    """The room's hook answer in the client's terms: additional context names the
    client's own event; ``decision: block`` with a reason means the same to all three
    (Codex's Stop and Gemini's AfterAgent go on with the reason as the next prompt)."""
    specific = output.get("hookSpecificOutput")
    if kind == "claude" or not isinstance(specific, dict):
        return output
    return dict(output, hookSpecificOutput=dict(specific, hookEventName=event))


def codex_exec_answer(jsonl: str) -> dict[str, Any]:
    """``codex exec --json``'s events as the answer ``claude -p --output-format json``
    gives (``session_id``, ``result``, ``num_turns``, ``is_error``, ``subtype``), so an
    ask reads both alike. Error items are warnings; a top-level ``error`` event or a
    failed turn without an answer is an error."""
    import json

    answer: dict[str, Any] = {"result": "", "num_turns": 0, "is_error": False, "subtype": ""}
    failure = ""
    for line in jsonl.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type") if isinstance(event, dict) else None
        item = event.get("item") if kind == "item.completed" else None
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            answer["session_id"] = event["thread_id"]
        elif isinstance(item, dict) and item.get("type") == "agent_message":
            answer["result"] = str(item.get("text") or "")
        elif kind == "turn.completed":
            answer["num_turns"] += 1
        elif kind in {"error", "turn.failed"}:
            error = event.get("error")
            failure = str(event.get("message") or (error or {}).get("message") or kind)
    if failure and not answer["result"]:
        answer |= {"is_error": True, "subtype": "error", "result": failure}
    return answer
