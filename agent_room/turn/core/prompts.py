"""What a prompt says by its text: a human's, a room nudge, link input, or a checkpoint.

Standard library only: the UserPromptSubmit hook classifies every prompt. The nudge is
the one line the delivery worker types; it names the waiting messages by id so the
recipient's hook can receipt exactly those.
"""

from __future__ import annotations

from agent_room.turn.core.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, ClassVar, Final

NUDGE_PREFIX = "[agent-room]"
COMPACTING = "session.compacting"
"""The audit event a PreCompact hook leaves: the memory worker checkpoints the session."""
RESUME_MARK = "[agent-room resume]"
"""The first line of a resume checkpoint's context left for a starting agent: its
SessionStart hook hands such a message over."""
LINK_OPEN = "[From @"
NAME_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
NAME_REST = NAME_FIRST | {"_", "-"}

DEFAULT_CHECKPOINT_PATTERNS: tuple[str, ...] = (
    r"^\[agent-room checkpoint\]",
    r"^(ANCHOR|CHECK|WAIT):",
)
"""The room's own checkpoint and timer prompts: their turns never cross a link."""
_DEFAULT_CHECKPOINT_STARTS = ("[agent-room checkpoint]", "ANCHOR:", "CHECK:", "WAIT:")
"""The same, as prefixes: the hook classifies every prompt without loading ``re``."""


class PromptKind:
    """What a prompt is, by its text alone (``core.origins`` makes of it where the turn
    came from, which is what the turn log stores): plain strings, not an ``enum`` (about
    3 ms of every UserPromptSubmit hook's start)."""

    HUMAN: Final = "human"
    NUDGE: Final = "nudge"
    LINK: Final = "link"
    CHECKPOINT: Final = "checkpoint"
    PEER: Final = "peer"
    """Wrapped by a client's own messaging, and none of the room's: another session's
    message (``core.origins``)."""
    NOTICE: Final = "notice"
    """A client's own notice about its messaging (``core.origins``)."""


class Prompt(Record):
    """A classified prompt."""

    __slots__ = ("kind", "message_ids", "peer")
    DEFAULTS: ClassVar[dict[str, Any]] = {"message_ids": (), "peer": None}

    kind: str
    """One of ``PromptKind``'s."""
    message_ids: tuple[int, ...]
    """For a nudge: the ids of the messages it names."""
    peer: str | None
    """For link input: the name it came from."""


def nudge_text(senders: Sequence[str], ids: Sequence[int]) -> str:
    """The one line typed into an idle agent's pane for waiting messages."""
    count = len(ids)
    noun = "message" if count == 1 else "messages"
    names = ", ".join(f"@{s}" for s in dict.fromkeys(senders))
    refs = " ".join(f"#{i}" for i in ids)
    return f"{NUDGE_PREFIX} {count} new {noun} from {names} ({refs})"


def classify(
    prompt: str, checkpoint_patterns: Sequence[str] = DEFAULT_CHECKPOINT_PATTERNS
) -> Prompt:
    """Classify one prompt as the UserPromptSubmit hook received it."""
    text = prompt.strip()
    if text.startswith(NUDGE_PREFIX):  # a nudge, or what a Stop hook handed over (its 1st line)
        ids = nudge_ids(text.partition("\n")[0])
        if ids or "new message" in text:
            return Prompt(kind=PromptKind.NUDGE, message_ids=ids)
    if checkpoint_patterns is DEFAULT_CHECKPOINT_PATTERNS:
        checkpoint = text.startswith(_DEFAULT_CHECKPOINT_STARTS)
    else:
        import re

        checkpoint = any(re.search(p, text) for p in checkpoint_patterns)
    if checkpoint:
        return Prompt(kind=PromptKind.CHECKPOINT)
    peer = link_peer(text)
    if peer is not None:
        return Prompt(kind=PromptKind.LINK, peer=peer)
    return Prompt(kind=PromptKind.HUMAN)


def nudge_ids(text: str) -> tuple[int, ...]:
    """The ids a nudge names at its end: ``(#41 #42)``, then only whitespace."""
    body = text.rstrip()
    if not body.endswith(")"):
        return ()
    inner = body[body.rfind("(") + 1 : -1]
    ids: list[int] = []
    at, end = 0, len(inner)
    while at < end:
        if inner[at] != "#":
            return ()
        digits = at + 1
        while digits < end and inner[digits].isdecimal():
            digits += 1
        if digits == at + 1:
            return ()
        ids.append(int(inner[at + 1 : digits]))
        at = digits
        while at < end and inner[at].isspace():
            at += 1
    return tuple(ids)


def link_peer(text: str) -> str | None:
    """The name in front of link input, ``[From @name]``; None for anything else."""
    if not text.startswith(LINK_OPEN):
        return None
    close = text.find("]", len(LINK_OPEN))
    name = text[len(LINK_OPEN) : close]
    if close < 0 or not 0 < len(name) <= 32 or name[0] not in NAME_FIRST:
        return None
    return name if all(ch in NAME_REST for ch in name) else None
