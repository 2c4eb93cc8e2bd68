"""``agent-room`` with no arguments (or ``agent-room console``): the full-screen console."""

from __future__ import annotations

import gc
import os
import sys
import threading
from dataclasses import replace

import click

from agent_room.core.snapshot import RoomSnapshot
from agent_room.turn.store.home import room_home


class _FirstRead(threading.Thread):
    """Reads the room once while the main thread imports the user interface.

    SQLite releases the interpreter lock while it works, so the first picture is ready
    about when Textual has loaded, and the console paints it on its first frame. A room
    on PostgreSQL is read here through the short commands' libpq binding, which loads
    without the interpreter lock; psycopg's import would hold it against Textual's. The
    console's workers, which keep the room open, use psycopg (``RoomConsole.open_room``).
    """

    def __init__(self, home: str) -> None:
        super().__init__(name="agent-room-first-read", daemon=True)
        self.home = home
        self.snapshot: RoomSnapshot | None = None

    def run(self) -> None:
        # imported in this thread, beside the main thread's import of the interface
        from agent_room.room.service import Room
        from agent_room.room.snapshot import SnapshotReader
        from agent_room.turn.core.errors import RoomError

        try:
            room = Room.open({"AGENT_ROOM_HOME": self.home})
        except RoomError:
            return  # the console's reader reports it
        try:
            self.snapshot = SnapshotReader(room).read()
        except RoomError:
            pass
        finally:
            room.close()


def cmd_console(*, theme: str | None, no_deliver: bool, until_clear: bool, served: bool) -> int:
    """Open the console on the room of ``$AGENT_ROOM_HOME``; return when it quits."""
    if not served and not (sys.stdin.isatty() and sys.stdout.isatty()):
        # without a terminal Textual draws escape codes into a pipe and never ends
        print(
            "agent-room: the console needs a terminal (stdin and stdout are not one);"
            " use agent-room who, handovers or watch instead",
            file=sys.stderr,
        )
        return 2

    # no garbage worth a collection is made before the first paint, and the collector's
    # passes over the freshly imported modules and new widgets cost a tenth of it; the
    # app turns collection back on once its first frame is out
    gc.disable()
    first = _FirstRead(str(room_home(os.environ)))
    first.start()
    # loaded while the first read runs in its thread (``_FirstRead``), not before it
    from agent_room.ui.app import make_app
    from agent_room.ui.settings import ConsoleSettings

    settings = ConsoleSettings.load(os.environ)
    if theme:
        settings = replace(settings, theme=theme)
    if no_deliver:
        settings = replace(settings, deliver=False)
    if until_clear:
        settings = replace(settings, until_clear=True)
    if served:
        settings = replace(settings, served=True)
    first.join(timeout=5.0)
    app = make_app(settings, snapshot=first.snapshot)
    app.run()
    return int(app.return_code or 0)


# The command (loaded by cli.app when they run).


@click.command("console")
@click.option("--theme", help="the theme to open with (see the command palette)")
@click.option(
    "--no-deliver",
    is_flag=True,
    help="run no room worker inside, nor start the background deliverer",
)
@click.option(
    "--until-clear",
    is_flag=True,
    help="quit once a decision leaves no handover pending (agent-room popup uses it)",
)
@click.option("--served", is_flag=True, hidden=True, help="run for agent-room serve")
def console_command(theme: str | None, no_deliver: bool, until_clear: bool, served: bool) -> int:
    return cmd_console(theme=theme, no_deliver=no_deliver, until_clear=until_clear, served=served)
