"""``agent-room status``: one short line for a status bar (tmux ``status-right``).

It runs every few seconds for as long as tmux does, so its common shapes are read here
without the command-line library (as ``send``'s are): no option, ``--format FORMAT``.
Anything else (``--help``, an unknown option) goes to the CLI's ``status`` command, which
prints through ``print_status`` too.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def quick_status(args: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """Print the status line; None when the command line needs the full parser."""
    fmt: str | None = None
    rest = iter(args)
    for word in rest:
        if word == "--format":
            fmt = next(rest, None)
            if fmt is None:
                return None
        elif word.startswith("--format="):
            fmt = word.removeprefix("--format=")
        else:
            return None
    return print_status(fmt, environ)


def print_status(fmt: str | None, environ: Mapping[str, str]) -> int:
    """Print the room's status line in ``fmt`` (default ``core.attention``'s)."""
    from agent_room.turn.core.status_line import (
        DEFAULT_STATUS_FORMAT,
        StatusCounts,
        check_status_format,
        render_status,
    )
    from agent_room.turn.store.attention import room_exists, status_counts
    from agent_room.turn.store.home import room_home
    from agent_room.turn.store.sqlite_base import StoreBase

    text = check_status_format(DEFAULT_STATUS_FORMAT if fmt is None else fmt)
    home = room_home(environ)
    if not room_exists(home):  # an empty room's line, and none made: a status bar asks forever
        sys.stdout.write(render_status(text, StatusCounts()) + "\n")
        return 0
    store = StoreBase(home, timeout=2.0)
    try:
        line = render_status(text, status_counts(store.conn))
    finally:
        store.close()
    sys.stdout.write(line + "\n")
    return 0
