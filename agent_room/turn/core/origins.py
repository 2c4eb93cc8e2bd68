"""Where a turn came from: one rule, whatever the transport wrapped its prompt in.

Pure and on the standard library (no ``re``, no ``enum``): the UserPromptSubmit hook of
every client classifies every turn once with it and stores the answer with the turn,
and everything that later asks "may this turn cross a link? did the room cause it?"
reads that answer instead of guessing again from the prompt.

A prompt reaches the hook as typed into the pane (a person, or the room's nudge), or
wrapped by a client's own messaging: Claude Code hands a message that came through its
socket over as ``<cross-session-message from=... from-name=...>BODY</cross-session-message>``
(the model itself reads ``Another Claude session sent a message: ...`` around it, and a
later client may pass that on). ``unwrap`` takes every such layer off first, so a nudge
is a nudge on every transport. A nudge only names messages; what started the turn is
what those messages are (``origin``): a peer's message or crossing, or the room's own
timer, reminder or notice.
"""

from __future__ import annotations

from agent_room.turn.core.prompts import (
    DEFAULT_CHECKPOINT_PATTERNS,
    NUDGE_PREFIX,
    Prompt,
    PromptKind,
    classify,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, Final

NATIVE_OPEN = "<cross-session-message"
NATIVE_CLOSE = "</cross-session-message>"
PEER_PREFIX = "Another Claude session sent a message:"
"""What Claude Code shows its model around a message from another session."""
PEER_SUFFIX = "This came from another Claude session"
"""The start of the paragraph Claude Code adds after such a message."""
CLIENT_NOTICES = ("[Cross-session delivery notice]", "[Cross-session idle notice]")
"""Prompts a client writes itself about its own messaging: nobody's message."""
REMINDER_PREFIX = f"{NUDGE_PREFIX} You answered @"
"""The room's anchor reminder (``core.timers.anchor_reminder``)."""
TIMER_PREFIXES = ("ANCHOR: ", "CHECK: ", "WAIT: ")
"""A fired timer's message (``core.timers.fired_text``)."""
ROOM = "room"
OPERATOR = "operator"


class Origin:
    """What started a turn, as stored with it (``turns.kind``): plain strings (the hook
    loads no ``enum``)."""

    PERSON: Final = "human"
    """Typed by a person, or the operator's own message: it answers no peer."""
    MESSAGE: Final = "message"
    """A peer agent's message (a chat, a handover, an answer, a client's SendMessage)."""
    CROSSING: Final = "crossing"
    """A peer's output across a link."""
    TIMER: Final = "timer"
    """A timer the agent set (ANCHOR / CHECK / WAIT), fired by the room or typed."""
    REMINDER: Final = "reminder"
    """The room reminding the agent of its anchor."""
    CHECKPOINT: Final = "checkpoint"
    """A checkpoint prompt."""
    NOTICE: Final = "notice"
    """A notice of the room's own (a link's rules, a freeze, a close) or of the client's."""
    NUDGE: Final = "nudge"
    """A nudge whose messages the room no longer knows (or a row from before origins)."""
    CONTINUED: Final = "unknown"
    """A turn a Stop hook continued (the store's kind for a Stop with no open turn)."""


ROOM_MADE: frozenset[str] = frozenset(
    {Origin.TIMER, Origin.REMINDER, Origin.CHECKPOINT, Origin.NOTICE}
)
"""Origins of the room's own prompts: their turns never cross and never spend a budget."""
ANSWERS: frozenset[str] = frozenset({Origin.MESSAGE, Origin.CROSSING, Origin.NUDGE, "link"})
"""Origins of turns that answer a peer: the only ones that may cross a link (``link``:
a ``[From @name]`` frame typed by hand, as older rooms did)."""
ROOM_CAUSED: frozenset[str] = ROOM_MADE | ANSWERS
"""Turns the room prompted (typed or sent a nudge, or a prompt of its own): what the
turn breaker counts. A person's turn and a continuation are not among them."""


def unwrap(prompt: str) -> tuple[str, bool]:
    """The prompt with every transport's wrapping taken off, and whether it had any.

    Takes off, in any nesting: surrounding whitespace, Claude Code's ``Another Claude
    session sent a message:`` lead and the paragraph it adds after, and the
    ``<cross-session-message ...>`` element its socket delivers (attributes skipped:
    quoted values may hold ``>``)."""
    text = prompt.strip()
    wrapped = False
    while True:
        if text.startswith(PEER_PREFIX):
            text = text[len(PEER_PREFIX) :]
            cut = text.rfind(PEER_SUFFIX)
            if cut >= 0:
                text = text[:cut]
            text, wrapped = text.strip(), True
            continue
        if text.startswith(NATIVE_OPEN) and text.endswith(NATIVE_CLOSE):
            end = _tag_end(text, len(NATIVE_OPEN))
            if end < 0:
                return text, wrapped
            text, wrapped = text[end + 1 : -len(NATIVE_CLOSE)].strip(), True
            continue
        return text, wrapped


def _tag_end(text: str, at: int) -> int:
    """The index of the ``>`` that closes a start tag, skipping quoted values; -1 if none."""
    quote = ""
    for index in range(at, len(text)):
        ch = text[index]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == ">":
            return index
    return -1


def classify_prompt(
    prompt: str, checkpoint_patterns: Sequence[str] = DEFAULT_CHECKPOINT_PATTERNS
) -> Prompt:
    """``core.prompts.classify`` on the prompt as the room wrote it: unwrapped first.

    A wrapped prompt that is none of the room's came from another session (a peer's
    message through the client's own messaging); a client's notice about its messaging
    is nobody's message."""
    text, wrapped = unwrap(prompt)
    if text.startswith(CLIENT_NOTICES):
        return Prompt(kind=PromptKind.NOTICE)
    found = classify(text, checkpoint_patterns)
    if wrapped and found.kind == PromptKind.HUMAN:
        return Prompt(kind=PromptKind.PEER)
    return found


def message_origin(sender: str, kind: str, body: str) -> str:
    """What one delivered message makes of the turn it starts."""
    if sender == OPERATOR:
        return Origin.PERSON
    if sender != ROOM:
        return Origin.CROSSING if kind == "link" else Origin.MESSAGE
    if body.startswith(TIMER_PREFIXES):
        return Origin.TIMER
    if body.startswith(REMINDER_PREFIX):
        return Origin.REMINDER
    return Origin.NOTICE


_RANK = (
    Origin.MESSAGE,
    Origin.CROSSING,
    Origin.PERSON,
    Origin.TIMER,
    Origin.REMINDER,
    Origin.NOTICE,
)
"""Which origin a turn started by several messages takes: a peer's message first (the
turn answers it), then a person's, then the room's own."""


def origin(prompt: Prompt, messages: Sequence[Mapping[str, Any]] = ()) -> str:
    """Where a turn came from: its classified prompt and, for a nudge, the messages it
    named (rows with ``sender``, ``kind``, ``body``)."""
    kind = prompt.kind
    if kind == PromptKind.NUDGE:
        found = {
            message_origin(str(m.get("sender")), str(m.get("kind")), str(m.get("body") or ""))
            for m in messages
        }
        return next((o for o in _RANK if o in found), Origin.NUDGE)
    return {
        PromptKind.CHECKPOINT: Origin.CHECKPOINT,
        PromptKind.LINK: Origin.CROSSING,
        PromptKind.PEER: Origin.MESSAGE,
        PromptKind.NOTICE: Origin.NOTICE,
    }.get(kind, Origin.PERSON)


def cause(found: str, messages: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Who caused a turn of origin ``found``, as the turn breaker counts it: the peer
    whose message the room handed over, ``room`` for the room's own prompts (and a nudge
    whose messages it no longer knows), None for a turn the room did not prompt (a
    person's, or a message another session sent through its client's own socket)."""
    if found in (Origin.MESSAGE, Origin.CROSSING):
        peers = [str(m.get("sender")) for m in messages if m.get("sender") not in (ROOM, OPERATOR)]
        return peers[0] if peers else None
    if found == Origin.NUDGE or (found in ROOM_MADE and messages):
        return ROOM  # (a checkpoint or a timer typed at the prompt: whoever typed it)
    return None
