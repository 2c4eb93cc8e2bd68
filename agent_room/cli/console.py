"""``agent-room`` with no arguments (or ``agent-room console``): the full-screen console."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_console(args: argparse.Namespace) -> int:
    """Open the console on the room of ``$AGENT_ROOM_HOME``; return when it quits."""
    from agent_room.ui.app import make_app
    from agent_room.ui.settings import ConsoleSettings

    settings = ConsoleSettings.load(os.environ)
    overrides: dict[str, object] = {}
    if getattr(args, "theme", None):
        overrides["theme"] = args.theme
    if getattr(args, "no_deliver", False):
        overrides["deliver"] = False
    if overrides:
        settings = settings.model_copy(update=overrides)
    app = make_app(settings)
    app.run()
    return int(app.return_code or 0)
