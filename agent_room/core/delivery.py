"""The delivery policy: what the deliverer does next for one recipient.

Pure. The deliverer gathers the facts (state, queued ids, the open nudge, why typing
would be refused) and applies the decision; the rules live here so they can be tested
without tmux or a database.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from agent_room.turn.core.clients import settle_for
from agent_room.turn.store.delivery import MAX_NUDGES

__all__ = [
    "CLEAR_LINE_BY_AGENT",
    "MAX_EXTRA_ENTERS",
    "MAX_NUDGES",
    "RECEIPT_TIMEOUT",
    "RETRY_AFTER",
    "Action",
    "Decision",
    "Failed",
    "OpenNudge",
    "clear_keys_for",
    "decide",
    "retryable",
    "settle_for",
]
"""``settle_for`` is the client's (``core.clients``), kept here beside the other rules."""

RECEIPT_TIMEOUT = 3.0
"""Seconds to wait for the recipient's hook to receipt a nudge before pressing Enter again."""
MAX_EXTRA_ENTERS = 2
"""Enter is sent again at most twice; then the delivery is marked failed."""
RETRY_AFTER = 10.0
"""Seconds after a failure before its messages are nudged again (a passing fault clears)."""


CLEAR_LINE_BY_AGENT: dict[str, tuple[str, ...]] = {
    "claude": ("C-e", "C-u"),
    "codex": ("C-e", "C-u"),
    "gemini": ("C-e", "C-u"),
}
"""Keys that empty the input line before a nudge is typed, by agent kind, so that a nudge
left unsubmitted is not prefixed to the next one. Checked with Claude Code 2.1.330: end of
line, then kill to its start (the text can be pasted back with ctrl+y); harmless on an
empty line. The same keys empty Codex CLI 0.169.0's and Gemini CLI 0.61.0's input line.
Kinds whose keys are not verified get none: Escape or ctrl+c could open a menu, answer a
dialog or end the program."""


class Action(StrEnum):
    """What to do for a recipient now."""

    NUDGE = "nudge"
    """Type one line naming the queued messages."""
    ENTER = "enter"
    """Press Enter again: the nudge was typed but no receipt came."""
    FAIL = "fail"
    """Give up on the open nudge: its messages are marked failed."""
    WAIT = "wait"
    """Nothing to do now (a receipt is awaited, or the Stop hook will deliver)."""
    HOLD = "hold"
    """Keep the messages queued and say why."""


class OpenNudge(NamedTuple):
    """A nudge typed and not yet receipted."""

    message_ids: tuple[int, ...]
    last_try: float
    enters: int


class Failed(NamedTuple):
    """A message whose nudge got no receipt."""

    id: int
    attempts: int
    """Nudges that named it so far."""
    failed_at: float


class Decision(NamedTuple):
    """The deliverer's next step for one recipient."""

    action: Action
    message_ids: tuple[int, ...] = ()
    note: str = ""


def clear_keys_for(agent: str) -> tuple[str, ...]:
    """The keys that empty an agent kind's input line (none where not verified)."""
    return CLEAR_LINE_BY_AGENT.get(agent, ())


def retryable(failed: Sequence[Failed], now: float, retry_after: float = RETRY_AFTER) -> set[int]:
    """The failed messages due for another nudge: a while after the failure, and within
    the bound of nudges per message."""
    return {f.id for f in failed if f.attempts < MAX_NUDGES and now - f.failed_at >= retry_after}


def decide(
    *,
    state: str,
    queued: Sequence[int],
    open_nudge: OpenNudge | None,
    refusal: str | None,
    has_pane: bool,
    now: float,
    receipt_timeout: float = RECEIPT_TIMEOUT,
    failed: Sequence[Failed] = (),
    retry_after: float = RETRY_AFTER,
) -> Decision:
    """Decide for one recipient. ``refusal`` says why typing into its pane is unsafe;
    ``failed`` are its messages whose nudges got no receipt (retried when healthy)."""
    pending = set(queued)
    if open_nudge is not None and pending & set(open_nudge.message_ids):
        if now - open_nudge.last_try < receipt_timeout:
            return Decision(Action.WAIT, note="waiting for the receipt")
        if state == "busy":  # its Stop hook hands them over: nothing has failed
            return Decision(Action.WAIT, note="busy: delivered at the turn boundary")
        if open_nudge.enters >= MAX_EXTRA_ENTERS:
            return Decision(
                Action.FAIL,
                open_nudge.message_ids,
                note=f"no receipt after {open_nudge.enters + 1} tries",
            )
        if state == "idle" and has_pane and refusal is None:
            return Decision(Action.ENTER, open_nudge.message_ids)
    retry = retryable(failed, now, retry_after) - pending
    if not queued and not retry:
        return Decision(Action.WAIT)
    if state == "ended":
        return Decision(Action.HOLD, note="the recipient's session has ended")
    if state == "waiting":
        return Decision(Action.HOLD, note="a permission dialog is open")
    if state == "busy":
        return Decision(Action.WAIT, note="busy: delivered at the turn boundary")
    if not has_pane:
        return Decision(Action.HOLD, note="not in tmux: read with agent-room inbox")
    if refusal is not None:
        return Decision(Action.HOLD, note=refusal)
    return Decision(Action.NUDGE, tuple(sorted(pending | retry)))
