"""The status line: what it counts and how its format is checked and filled.

``agent-room status`` runs from a tmux status bar every few seconds, for as long as tmux
runs, so this module loads nothing but ``collections`` (already loaded by sqlite3):
no dataclasses (which load ``inspect`` and ``re``), no ``string``.
"""

from __future__ import annotations

from collections import namedtuple

from agent_room.turn.core.errors import BadInput

OPERATOR = "operator"
"""The operator's name in the room: agents write to ``@operator``."""

STATUS_FIELDS = ("handovers", "waiting", "failed", "frozen", "messages")
"""What the status line can show: pending handovers, agents in a permission dialog,
undelivered messages, frozen links, unread messages to the operator."""
DEFAULT_STATUS_FORMAT = "⚑{handovers} ⏸{waiting} ✗{failed}"
"""The status line as tmux shows it by default, e.g. ``⚑2 ⏸1 ✗0``."""

StatusCounts = namedtuple(  # not typing.NamedTuple: it loads typing
    "StatusCounts",
    ("handovers", "waiting", "failed", "frozen", "messages"),
    defaults=(0, 0, 0, 0, 0),
)
"""The numbers behind the status line."""


def check_status_format(text: str) -> str:
    """``text`` if it is a format over ``STATUS_FIELDS`` only; else ``BadInput`` naming
    the unknown field, so a typo in a tmux.conf line says what is wrong."""
    import _string  # type: ignore[import-not-found]  # str.format's own parser: no re

    known = ", ".join("{" + f + "}" for f in STATUS_FIELDS)
    try:
        parts = list(_string.formatter_parser(text))
    except ValueError as exc:
        raise BadInput(f"invalid status format {text!r}: {exc}") from None
    for _literal, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in STATUS_FIELDS or conversion or "{" in (spec or ""):
            raise BadInput(f"unknown field {{{name}}} in the status format: use {known}")
    try:
        text.format_map(dict.fromkeys(STATUS_FIELDS, 0))
    except (ValueError, TypeError) as exc:
        raise BadInput(f"invalid status format {text!r}: {exc}") from None
    return text


def render_status(text: str, counts: StatusCounts) -> str:
    """The status line for ``counts`` in a format ``check_status_format`` accepted."""
    return text.format_map(counts._asdict())
