"""``agent-room room copy --to postgresql://...``: move a SQLite room into PostgreSQL."""

from __future__ import annotations

import os
import sys

import click

from agent_room.cli.params import Group
from agent_room.store.copy import copy_room
from agent_room.turn.core.errors import BadInput
from agent_room.turn.store.engine import describe
from agent_room.turn.store.home import room_home
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.turn.store.urls import has_password


def cmd_room_copy(*, to: str, replace: bool) -> int:
    """Copy this room (everything, the audit log included) into a PostgreSQL room."""
    url = to.strip()
    if not url.startswith(("postgresql://", "postgres://")):
        raise BadInput("--to must be a postgresql:// URL")
    if has_password(url):
        raise BadInput(
            "a password on the command line is seen by others (ps, shell history): put it"
            " in ~/.pgpass or a file named by PGPASSFILE (mode 0600), not in the URL"
        )
    store = SqliteStore(room_home(os.environ))
    try:
        counts = copy_room(store, url, replace=replace)
    finally:
        store.close()
    print(
        f"copied the room into {describe(url)}: {counts.get('messages', 0)} messages,"
        f" {counts.get('events', 0)} events, {counts.get('sessions', 0)} sessions",
        file=sys.stderr,
    )
    print(
        "use it on every host with: database = <the URL> in room.conf (mode 0600),"
        " or AGENT_ROOM_DATABASE",
        file=sys.stderr,
    )
    return 0


# The commands (loaded by cli.app when they run).


@click.group("room", cls=Group)
def room_command() -> None:
    """The room itself: copy a SQLite room into PostgreSQL."""


@room_command.command("copy")
@click.option("--to", required=True, metavar="URL", help="postgresql://user@host/db")
@click.option("--replace", is_flag=True, help="overwrite a room already there")
def _copy(to: str, replace: bool) -> int:
    """Copy this room, audit log and all, into PostgreSQL."""
    return cmd_room_copy(to=to, replace=replace)
