"""A prompt that came from another session through Claude Code's messaging socket.

Claude Code (2.1.224 and later) hands a message sent with its own SendMessage tool to the
recipient as a user turn wrapped in ``<cross-session-message from="uds:SOCKET"
from-name="NAME" from-mode="MODE">``; the UserPromptSubmit hook gets that wrapper as the
prompt, and nothing else tells it where the turn came from. Standard library only: the
hook reads every prompt with it.
"""

from __future__ import annotations

from agent_room.turn.core.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

OPEN = "<cross-session-message"
_WRAPPER = (
    r"(?s)\A<cross-session-message((?:\s+[a-z][a-z-]*=\"[^\"]*\")*)\s*>\n?(.*?)\n?"
    r"</cross-session-message>\s*\Z"
)
_ATTR = r"([a-z][a-z-]*)=\"([^\"]*)\""
_ENTITIES = (("&quot;", '"'), ("&lt;", "<"), ("&gt;", ">"), ("&apos;", "'"), ("&amp;", "&"))
_SOCKET_PID = r"/(\d+)\.sock\Z"
"""Patterns compiled on first use (``re`` keeps them): every prompt's hook imports this
module, few prompts come wrapped."""


class PeerPrompt(Record):
    """The sender's claims and the message inside the wrapper."""

    __slots__ = ("body", "mode", "name", "socket")
    DEFAULTS: ClassVar[dict[str, Any]] = {"name": None, "mode": None, "socket": None}

    body: str
    socket: str | None
    """The sender's own socket (the client verified it belongs to the sending process)."""
    name: str | None
    """The name the sender claims (not verified by the client)."""
    mode: str | None

    @property
    def socket_pid(self) -> int | None:
        """The sending client's pid, where its socket has the default name ``PID.sock``."""
        import re

        found = re.search(_SOCKET_PID, self.socket or "")
        return int(found.group(1)) if found else None


def _unescape(value: str) -> str:
    for entity, char in _ENTITIES:
        value = value.replace(entity, char)
    return value


def parse_peer_prompt(prompt: str) -> PeerPrompt | None:
    """The wrapped message, or None for any other prompt (typed, a nudge, link input)."""
    if not prompt.startswith(OPEN):
        return None
    import re

    found = re.match(_WRAPPER, prompt)
    if found is None:
        return None
    attrs = {k: _unescape(v) for k, v in re.findall(_ATTR, found.group(1))}
    sender = attrs.get("from", "")
    return PeerPrompt(
        body=found.group(2),
        socket=sender[4:] if sender.startswith("uds:") else None,
        name=attrs.get("from-name") or None,
        mode=attrs.get("from-mode") or None,
    )
