"""What needs the operator, and when to tell them: the notifications.

Pure policy over plain facts the store read: which things wait for a person (a handover,
an agent in a permission dialog for too long, a failed delivery, a frozen link, a hold of
the loop or turn breaker, a message to ``@operator``), the text that names the agent and
the command that acts, and the notifier's de-duplication and rate limit. Standard library
only. The status line's counts and format live in ``core.status_line``, which must stay
lighter still.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agent_room.core.usage import ROOM, Budget, budget_text
from agent_room.turn.core.status_line import OPERATOR

__all__ = [
    "CHANNELS",
    "OPERATOR",
    "Alert",
    "NotifyChannel",
    "NotifyPolicy",
    "NotifyState",
    "RoomFacts",
]

CHANNELS = ("tmux", "desktop", "command")
"""Where notifications go: tmux (display-message, status refresh), the desktop
(notify-send) and a command of the user's own."""


# -- what needs the operator -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoomFacts:
    """What the store read for the notifier: plain tuples, oldest first."""

    handovers: tuple[tuple[int, str, str], ...] = ()
    """Pending handovers: (id, sender, recipient)."""
    waiting: tuple[tuple[str, str, float], ...] = ()
    """Sessions in a permission dialog: (name, session id, since)."""
    failed: tuple[tuple[str, int, int], ...] = ()
    """Undelivered messages per recipient: (name, count, newest failed message id)."""
    frozen: tuple[tuple[int, str, str, str, float], ...] = ()
    """Frozen links: (id, initiator, responder, reason, frozen at)."""
    messages: tuple[tuple[int, str, str], ...] = ()
    """Unread messages to the operator: (id, sender, first line)."""
    budgets: tuple[tuple[str, int, float, float, float, float], ...] = ()
    """Budget levels reached in the current spans: (scope, level, spent, limit, span,
    span start)."""
    code: tuple[tuple[str, str, str], ...] = ()
    """Agents touching the same code before anyone merged (``core.worktrees.Overlap``):
    (key, agent, text)."""
    loops: tuple[tuple[int, tuple[str, ...], str], ...] = ()
    """Active holds of the loop and turn breakers: (id, names, reason: ``turns`` or '')."""


@dataclass(frozen=True, slots=True)
class Alert:
    """One thing that needs the operator, as every channel tells it."""

    key: str
    """Stable while the thing lasts, new when it happens again: what de-duplicates."""
    kind: str
    """``handover``, ``permission``, ``failed``, ``frozen``, ``loop``, ``message``,
    ``budget`` or ``code``."""
    agent: str
    """The agent it is about (its name)."""
    text: str
    """One line: the agent, what it needs, and the command that acts."""


def alerts(facts: RoomFacts, *, now: float, permission_after: float) -> list[Alert]:
    """Everything in ``facts`` that needs the operator now, in a stable order."""
    found: list[Alert] = []
    for hid, sender, recipient in facts.handovers:
        found.append(
            Alert(
                f"handover:{hid}",
                "handover",
                sender,
                f"@{sender} hands over to @{recipient}: handover #{hid} waits for you"
                f" (agent-room approve {hid}, or reject {hid} --reason ...)",
            )
        )
    for name, session_id, since in facts.waiting:
        waited = now - since
        if waited >= permission_after:
            found.append(
                Alert(
                    f"permission:{session_id}:{since:.3f}",
                    "permission",
                    name,
                    f"@{name} has waited in a permission dialog for {int(waited)} s"
                    f" (agent-room enter {name})",
                )
            )
    for name, count, newest in facts.failed:
        plural = "s" if count != 1 else ""
        found.append(
            Alert(
                f"failed:{name}:{newest}",
                "failed",
                name,
                f"@{name}: {count} message{plural} could not be delivered"
                f" (agent-room enter {name}, or agent-room who)",
            )
        )
    for link_id, initiator, responder, reason, frozen_at in facts.frozen:
        why = f": {reason}" if reason else ""
        found.append(
            Alert(
                f"frozen:{link_id}:{frozen_at:.3f}",
                "frozen",
                initiator,
                f"link #{link_id} @{initiator} <-> @{responder} froze{why}"
                f" (agent-room link thaw {link_id}, or close {link_id})",
            )
        )
    for scope, reached, spent, limit, span, since in facts.budgets:
        budget = Budget(scope, limit, span)
        found.append(
            Alert(
                f"budget:{scope}:{reached}:{since:.0f}",
                "budget",
                "room" if scope == ROOM else scope,
                budget_text(budget, spent, reached, since),
            )
        )
    for key, agent, text in facts.code:
        found.append(Alert(key, "code", agent, text))
    for hold_id, path, reason in facts.loops:
        if reason == "turns":
            who = " and ".join(f"@{n}" for n in dict.fromkeys(path))
            what = f"the room stopped prompting {who}: too many turns it caused"
        else:
            what = "messages in a loop " + " -> ".join(f"@{n}" for n in path)
        found.append(
            Alert(
                f"loop:{hold_id}",
                "loop",
                path[0] if len(path) == 1 else path[1],
                f"{what}, held as loop #{hold_id} (agent-room loops release {hold_id}, or --drop)",
            )
        )
    for mid, sender, summary in facts.messages:
        found.append(
            Alert(
                f"message:{mid}",
                "message",
                sender,
                f"@{sender} writes to you: {summary} (agent-room inbox --as operator)",
            )
        )
    return found


# -- when to tell ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NotifyPolicy:
    """How often the notifier may speak."""

    per_minute: int = 6
    """At most this many notifications within any 60 s; the rest wait their turn."""
    permission_after: float = 30.0
    """Seconds an agent sits in a permission dialog before the operator is told."""


@dataclass(frozen=True, slots=True)
class NotifyState:
    """What the notifier remembers between passes."""

    told: frozenset[str] = frozenset()
    """Keys already told that still hold: never told twice."""
    sent_at: tuple[float, ...] = field(default=())
    """When the notifications of the last minute went out."""


def decide(
    found: list[Alert], state: NotifyState, *, now: float, policy: NotifyPolicy
) -> tuple[list[Alert], NotifyState]:
    """Which of ``found`` to tell now, and the state after telling them.

    A key is told once while it holds; one that cleared is forgotten, so the same thing
    happening again (a new key) is told again. Past ``per_minute`` the rest wait, in
    order, for a later pass: nothing is dropped, nothing floods."""
    present = {a.key for a in found}
    told = state.told & present
    recent = tuple(t for t in state.sent_at if now - t < 60.0)
    room = max(0, policy.per_minute - len(recent))
    fresh = [a for a in found if a.key not in told][:room]
    told = told | {a.key for a in fresh}
    return fresh, NotifyState(told=frozenset(told), sent_at=recent + (now,) * len(fresh))


class NotifyChannel(Protocol):
    """Somewhere the operator hears about alerts (tmux, the desktop, a command)."""

    name: str

    def available(self) -> str | None:
        """Why the channel cannot speak on this machine, or None when it can."""
        ...

    def send(self, alerts: Sequence[Alert]) -> None:
        """Tell the operator ``alerts``; raise when the channel failed."""
        ...
