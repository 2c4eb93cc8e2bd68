"""What started a turn: a human, a room nudge, link input, or a checkpoint.

Standard library only: the UserPromptSubmit hook classifies every prompt. The nudge is
the one line the delivery worker types; it names the waiting messages by id so the
recipient's hook can receipt exactly those.
"""

from __future__ import annotations

import re
from enum import StrEnum

from agent_room.core.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, ClassVar

NUDGE_PREFIX = "[agent-room]"
COMPACTING = "session.compacting"
"""The audit event a PreCompact hook leaves: the memory worker checkpoints the session."""
RESUME_MARK = "[agent-room resume]"
"""The first line of a resume checkpoint's context left for a starting agent: its
SessionStart hook hands such a message over."""
LINK_PREFIX = r"^\[From @([a-z0-9][a-z0-9_-]{0,31})\]"
NUDGE_IDS = r"\(((?:#\d+\s*)+)\)\s*$"
"""Patterns compiled on first use (``re`` keeps them): not in every hook's start-up."""

DEFAULT_CHECKPOINT_PATTERNS: tuple[str, ...] = (
    r"^\[agent-room checkpoint\]",
    r"^(ANCHOR|CHECK|WAIT):",
)
"""The room's own checkpoint and timer prompts: their turns never cross a link."""


class PromptKind(StrEnum):
    """Who or what started a turn."""

    HUMAN = "human"
    NUDGE = "nudge"
    LINK = "link"
    CHECKPOINT = "checkpoint"


class Prompt(Record):
    """A classified prompt."""

    __slots__ = ("kind", "message_ids", "peer")
    DEFAULTS: ClassVar[dict[str, Any]] = {"message_ids": (), "peer": None}

    kind: PromptKind
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
    if text.startswith(NUDGE_PREFIX):
        found = re.search(NUDGE_IDS, text)
        ids = tuple(int(i) for i in re.findall(r"\d+", found.group(1))) if found else ()
        if ids or "new message" in text:
            return Prompt(kind=PromptKind.NUDGE, message_ids=ids)
    if any(re.search(p, text) for p in checkpoint_patterns):
        return Prompt(kind=PromptKind.CHECKPOINT)
    linked = re.match(LINK_PREFIX, text)
    if linked:
        return Prompt(kind=PromptKind.LINK, peer=linked.group(1))
    return Prompt(kind=PromptKind.HUMAN)
