"""``NotifySettings``: how the operator hears what needs them.

The ``[notify]`` table of the console's file (``ui.settings``), read by the console and
by ``agent-room watch``, which both run the notifier (``workers.notifier``): so it lives
below both. A frozen dataclass validated by pydantic where a file gives it (the console
opens without a file, and without loading pydantic, in the usual case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from annotated_types import Ge, Le

from agent_room.core.attention import NotifyPolicy


@dataclass(frozen=True, kw_only=True)
class NotifySettings:
    """The ``[notify]`` table: how the operator hears what needs them (``agent-room
    notify`` shows it; the console and ``agent-room watch`` run the notifier)."""

    __pydantic_config__: ClassVar[dict[str, object]] = {"extra": "forbid", "strict": False}

    enabled: bool = True
    """Run the notifier (one per room speaks: it holds the room's ``notifier`` lease)."""
    channels: tuple[Literal["tmux", "desktop", "command"], ...] = ("tmux", "desktop")
    """Where to tell: tmux (display-message on every client, status refresh), the
    desktop (notify-send, where installed), a command of your own."""
    command: tuple[str, ...] = ()
    """The command channel's program and arguments, run without a shell for each alert
    (the alert as JSON on stdin and in ``AGENT_ROOM_ALERT_*`` variables)."""
    permission_after: Annotated[float, Ge(0), Le(86400)] = 30.0
    """Seconds an agent sits in a permission dialog before you are told."""
    per_minute: Annotated[int, Ge(1), Le(600)] = 6
    """Notifications at most within any minute; the rest follow, none is dropped."""

    def policy(self) -> NotifyPolicy:
        """The notifier's policy (``core.attention``)."""
        return NotifyPolicy(per_minute=self.per_minute, permission_after=self.permission_after)
