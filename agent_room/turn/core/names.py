"""Names of agents in the room, and the checks that keep them safe in paths and panes.

Standard library only, and not even ``re``: the hook path validates names on every turn
and ``agent-room send`` starts every delivery, so each millisecond of imports counts.
"""

from __future__ import annotations

from agent_room.turn.core.errors import BadInput

NAME_START = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
NAME_CHARS = NAME_START | {"-", "_"}
"""Names are short, lowercase and safe inside a path, a tmux target and a shell word:
``[a-z0-9][a-z0-9_-]{0,31}``."""

OPERATOR = "operator"
"""The person at the console: a named party of the room with no session."""
ROOM = "room"
"""The room itself, as the sender of its notices and the author of what it decides."""
RESERVED_NAMES = frozenset({ROOM, OPERATOR, "all", "everyone"})
"""Names the room speaks as (``room``, ``operator``) or that would read as a broadcast."""

MAX_NAME_LENGTH = 32


def is_valid_name(raw: str) -> bool:
    """Tell whether ``raw`` is a valid name as written (no case folding)."""
    return (
        0 < len(raw) <= MAX_NAME_LENGTH
        and raw[0] in NAME_START
        and all(ch in NAME_CHARS for ch in raw)
    )


def parse_name(raw: str, *, allow_reserved: bool = False) -> str:
    """Return the canonical name for ``raw`` (``@`` prefix and case dropped) or raise.

    The error names the first rule broken, so one line tells the user what to fix.
    """
    text = raw[1:] if raw.startswith("@") else raw
    folded = text.lower() if text.isascii() else text
    if not folded:
        raise BadInput("a name cannot be empty")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in folded):
        raise BadInput(f"invalid name {raw!r}: control characters are not allowed")
    if "/" in folded or "\\" in folded or ".." in folded:
        raise BadInput(f"invalid name {raw!r}: path separators and '..' are not allowed")
    if any(ch.isspace() for ch in folded):
        raise BadInput(f"invalid name {raw!r}: spaces are not allowed")
    if len(folded) > MAX_NAME_LENGTH:
        raise BadInput(f"invalid name {raw!r}: longer than {MAX_NAME_LENGTH} characters")
    if not is_valid_name(folded):
        raise BadInput(
            f"invalid name {raw!r}: use a-z, 0-9, '-' and '_', starting with a letter or digit"
        )
    if folded in RESERVED_NAMES and not allow_reserved:
        raise BadInput(f"invalid name {raw!r}: {folded!r} is reserved by the room")
    return folded


def is_pane_id(pane: str) -> bool:
    """Whether ``pane`` is a tmux pane id (``%N``): panes are only ever targeted by id."""
    return pane.startswith("%") and pane[1:].isdigit()


def tmux_socket_of(tmux_env: str | None) -> str | None:
    """The server socket path from a ``$TMUX`` value (``/tmp/tmux-0/default,123,0``)."""
    return (tmux_env or "").split(",", 1)[0] or None


def name_from_cwd(cwd: str) -> str:
    """Derive a default name from a working directory's last component.

    ``/home/dev/My Project`` becomes ``my-project``; an empty result becomes ``agent``.
    """
    base = cwd.rstrip("/").rsplit("/", 1)[-1].lower()
    dashed = "".join(ch if ch in NAME_CHARS else " " for ch in base)
    cleaned = "-".join(dashed.split()).strip("-_")
    cleaned = cleaned[:MAX_NAME_LENGTH].strip("-_")
    if not cleaned or cleaned in RESERVED_NAMES:
        return "agent"
    return cleaned


def unique_name(base: str, taken: set[str]) -> str:
    """Return ``base`` or the first ``base-N`` not in ``taken``, kept within the length cap."""
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: MAX_NAME_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
        n += 1
