"""Message bodies: what the room accepts as text.

Standard library only. Bodies are stored and shown as they are written; anything typed
into a pane goes through ``core.typing`` instead, which is far stricter.
"""

from __future__ import annotations

from agent_room.turn.core.errors import BadInput

DEFAULT_BODY_LIMIT = 256 * 1024
"""Bodies over 256 KiB (UTF-8) are refused: the room is a message bus, not a file store."""


def check_body(text: str, *, limit: int = DEFAULT_BODY_LIMIT) -> str:
    """Return ``text`` if the room accepts it as a message body, else raise ``BadInput``."""
    if "\x00" in text:
        raise BadInput("the message body contains a NUL character")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise BadInput("the message body is not valid UTF-8 text") from None
    if not text.strip():
        raise BadInput("the message body is empty")
    if size > limit:
        raise BadInput(f"the message body is {size} bytes; the limit is {limit} bytes")
    return text
