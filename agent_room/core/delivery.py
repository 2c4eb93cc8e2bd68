"""The delivery policy: what the deliverer does next for one recipient.

Pure. The deliverer gathers the facts (state, queued ids, the open nudge, why typing
would be refused) and applies the decision; the rules live here so they can be tested
without tmux or a database.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

RECEIPT_TIMEOUT = 3.0
"""Seconds to wait for the recipient's hook to receipt a nudge before pressing Enter again."""
MAX_EXTRA_ENTERS = 2
"""Enter is sent again at most twice; then the delivery is marked failed."""

SETTLE_BY_AGENT = {"claude": 0.01, "codex": 0.03, "gemini": 0.06}
"""Pause between the typed text and Enter, by agent kind (measured: Codex turns an
immediate Enter into a newline, Gemini CLI has a 30 ms fast-Enter rule)."""
DEFAULT_SETTLE = 0.05


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


class Decision(NamedTuple):
    """The deliverer's next step for one recipient."""

    action: Action
    message_ids: tuple[int, ...] = ()
    note: str = ""


def settle_for(agent: str) -> float:
    """The settle delay between text and Enter for an agent kind."""
    return SETTLE_BY_AGENT.get(agent, DEFAULT_SETTLE)


def decide(
    *,
    state: str,
    queued: Sequence[int],
    open_nudge: OpenNudge | None,
    refusal: str | None,
    has_pane: bool,
    now: float,
    receipt_timeout: float = RECEIPT_TIMEOUT,
) -> Decision:
    """Decide for one recipient. ``refusal`` says why typing into its pane is unsafe."""
    pending = set(queued)
    if open_nudge is not None and pending & set(open_nudge.message_ids):
        if now - open_nudge.last_try < receipt_timeout:
            return Decision(Action.WAIT, note="waiting for the receipt")
        if open_nudge.enters >= MAX_EXTRA_ENTERS:
            return Decision(
                Action.FAIL,
                open_nudge.message_ids,
                note=f"no receipt after {open_nudge.enters + 1} tries",
            )
        if state == "idle" and refusal is None:
            return Decision(Action.ENTER, open_nudge.message_ids)
        if state == "busy":
            return Decision(Action.WAIT, note="busy: delivered at the turn boundary")
    if not queued:
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
    fresh = tuple(i for i in queued if open_nudge is None or i not in open_nudge.message_ids)
    return Decision(Action.NUDGE, fresh or tuple(queued))
