"""Where PostgreSQL's client library speaks: the room's error log, never a terminal.

libpq writes the server's notices (``WARNING:``, ``NOTICE:``) to standard error unless
told otherwise, and that is an agent's terminal for a hook or ``send``: each connection
the room makes hands them to the sink set here (``engine.notices_to_log``: the room's
``errors.log``), psycopg's watchers too. The one warning libpq prints itself, about a
password file open to others (or not a plain file), is forestalled: such a file is
passed over here as libpq would pass it over, and said in the same log. Standard
library only (``ctypes``, which the hot path's binding loads anyway).
"""

from __future__ import annotations

import ctypes
import os
import stat

from agent_room.turn.store.urls import has_password, unquote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

NOTICE_PROCESSOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
"""libpq's ``PQnoticeProcessor``."""
UNUSED_PASSFILE = "/nonexistent/agent-room/passfile-not-used"
"""Named instead of a password file open to others: libpq skips a missing one quietly."""
_sink: list[Callable[[str], None]] = []
"""Where the notices go (``set_notice_sink``); dropped while empty."""
_said: set[str] = set()
"""This process's own warnings already logged (each connection would repeat them)."""


def set_notice_sink(sink: Callable[[str], None]) -> None:
    """Send the server's notices on this process's connections to ``sink``."""
    _sink[:] = [sink]


def notice(text: str) -> None:
    """One notice (or warning) to the sink; never raises, never to standard error."""
    if _sink:
        try:  # noqa: SIM105 - no contextlib on the hooks' path
            _sink[0](text)
        except Exception:  # noqa: BLE001, S110 - a notice must never break a statement
            pass


def _notice(_arg: object, message: bytes | None) -> None:
    """libpq's notice processor."""
    if message:
        notice(message.decode("utf-8", "replace"))


PROCESSOR = NOTICE_PROCESSOR(_notice)
"""Kept for the life of the process: libpq calls it from every connection."""


def quiet(lib: Any, handle: Any) -> None:
    """Hand the connection's notices to the sink (before its first statement)."""
    if handle:
        lib.PQsetNoticeProcessor(handle, PROCESSOR, None)


def passfile_refusal(url: str, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """``url``, naming no password file where libpq would warn about the one it names
    (open to others, or not a plain file) and pass it over; and that warning."""
    if has_password(url):
        return url, None  # no file is read
    location, _, query = url.partition("?")
    named = [p.partition("=")[2] for p in query.split("&") if p.startswith("passfile=")]
    path = unquote(named[-1]) if named else environ.get("PGPASSFILE") or ""
    if not path:
        home = environ.get("HOME") or os.path.expanduser("~")
        path = os.path.join(home, ".pgpass")
    try:
        info = os.stat(path)
    except OSError:
        return url, None
    if not stat.S_ISREG(info.st_mode):
        why = f"password file {path} is not a plain file: not used"
    elif info.st_mode & 0o077:
        why = f"password file {path} is open to others (chmod 600 {path}): not used"
    else:
        return url, None
    kept = [p for p in query.split("&") if p and not p.startswith("passfile=")]
    return f"{location}?{'&'.join([*kept, f'passfile={UNUSED_PASSFILE}'])}", why


def warn_once(why: str) -> None:
    """A warning of the room's own about the connection, logged once per process."""
    if why not in _said:
        _said.add(why)
        notice(f"WARNING:  {why}")
