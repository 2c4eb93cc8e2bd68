"""Which database engine holds the room: the embedded SQLite file, or PostgreSQL.

One setting chooses: ``$AGENT_ROOM_DATABASE`` (a ``postgresql://`` URL), else the
``database`` line of the room's own ``room.conf`` (mode 0600: it may hold a password),
else the SQLite file in the room directory. Standard library only, and cheap when
nothing is set: the hooks ask on every turn.

A URL is never shown as given: ``describe`` drops the password, so no message or log
line carries a credential.
"""

from __future__ import annotations

import os

from agent_room.turn.core.errors import UnsafeRoom
from agent_room.turn.store.home import append_error_log
from agent_room.turn.store.roomconf import CONFIG_NAME, read_room_conf

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

DATABASE_VAR = "AGENT_ROOM_DATABASE"
HOST_VAR = "AGENT_ROOM_HOST"
SCHEMES = ("postgresql://", "postgres://")
NOT_POSTGRESQL = "must be a postgresql:// URL (or no line at all for the room's SQLite file)"


def database_url(home: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The PostgreSQL URL the room lives in, or ``None`` for the SQLite file."""
    env = os.environ if environ is None else environ
    url, source = env.get(DATABASE_VAR, "").strip(), DATABASE_VAR
    if not url:
        url, line = read_room_conf(home).get("database", ("", 0))
        source = f"{os.path.join(home, CONFIG_NAME)} line {line}: database"
    if not url:
        return None
    if not url.startswith(SCHEMES):
        raise UnsafeRoom(f"{source} {NOT_POSTGRESQL}")
    return url


def begin_connecting(home: str, timeout: float) -> None:
    """A room on PostgreSQL: begin connecting now, in a thread of its own, while the
    caller goes on importing (``store.libpq.connect_early``); the store opened next on
    ``home`` with the same ``timeout`` takes the connection over. Nothing on SQLite."""
    url = database_url(home)
    if url:
        from agent_room.turn.store.libpq import connect_early, opening

        notices_to_log(home)
        connect_early(*opening(url, timeout))


def notices_to_log(home: str) -> None:
    """The client library's notices and warnings to the room's error log, never to the
    terminal of an agent whose hook or ``send`` this process is."""
    from agent_room.turn.store.notices import set_notice_sink

    set_notice_sink(lambda text: append_error_log(home, "libpq", text))


def host_id(environ: Mapping[str, str] | None = None) -> str:
    """This machine's id in the room: ``$AGENT_ROOM_HOST``, else its host name (stable
    across sessions; no lookup, no import: the hooks ask on every turn)."""
    env = os.environ if environ is None else environ
    return env.get(HOST_VAR, "").strip() or os.uname().nodename or "localhost"


def describe(url: str) -> str:
    """``url`` as it may be shown: host, port and database, never the password."""
    rest = url.split("://", 1)[-1]
    location = rest.partition("?")[0]
    if "@" in location:
        user, _, location = location.rpartition("@")
        location = f"{user.split(':', 1)[0]}@{location}"
    shown = f"postgresql://{location}" if location else "postgresql (from the PG* environment)"
    schema = _schema(url.partition("?")[2])
    return f"{shown} (schema {schema})" if schema else shown


def _schema(query: str) -> str:
    """The room's schema as the URL's ``options`` name it (the first of ``search_path``),
    so that rooms sharing a database are told apart; ``urllib.parse`` would cost the hooks
    its imports."""
    for part in query.split("&"):
        key, _, value = part.partition("=")
        if key != "options":
            continue
        from agent_room.turn.store.urls import unquote  # only for a URL with options

        decoded = unquote(value.replace("+", " "))
        for setting in decoded.replace("-c ", "-c").split():
            name, _, path = setting.removeprefix("-c").partition("=")
            if name == "search_path" and path:
                return path.split(",")[0].strip()
    return ""
