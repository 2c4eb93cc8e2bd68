"""A session's states as the database stores them: plain strings.

The hooks set them on every turn of every agent without loading ``enum`` (about 3 ms of
every start); ``core.enums.SessionState`` is made of these same strings.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

IDLE: Final = "idle"
BUSY: Final = "busy"
WAITING: Final = "waiting"
"""A permission dialog is open: nothing may be typed into the pane."""
ENDED: Final = "ended"
