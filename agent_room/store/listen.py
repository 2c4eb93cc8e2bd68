"""PostgreSQL's wake-ups of a room, heard by the long-lived watchers (through psycopg:
the turn path's own libpq binding has no LISTEN, and needs none)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import psycopg

from agent_room.turn.store.notices import notice, passfile_refusal
from agent_room.turn.store.postgres import CHANNEL


def listen(
    url: str,
    stop: threading.Event,
    heard: Callable[[str | None], None],
    ready: Callable[[], object] = lambda: None,
    *,
    stop_check: float,
) -> None:
    """Call ``heard(host)`` on every wake-up of the room at ``url`` until ``stop`` is set
    (the notifications that arrive together: once for each host they name).

    ``host`` is the host the change concerns (a message queued for one of its sessions,
    one of its sessions changed), ``""`` for a change of no host in particular, ``None``
    for one that may concern every host. A connection of its own, LISTENing on
    ``CHANNEL``; notifications of other rooms in the database (other schemas) are passed
    over. A lost server is waited for (a second, then up to ten) and listened to again;
    ``heard(None)`` is called once it is back, as anything may have changed meanwhile.
    ``ready`` is called whenever the LISTEN is in place. ``stop`` is looked at every
    ``stop_check`` seconds while no notification comes (the thread's only wake-ups at
    rest).
    """
    pause = 1.0
    lost = False
    while not stop.is_set():
        try:
            conn = psycopg.connect(
                passfile_refusal(url, os.environ)[0], autocommit=True, connect_timeout=5
            )
        except psycopg.Error:
            stop.wait(pause)
            pause, lost = min(pause * 2, 10.0), True
            continue
        conn.add_notice_handler(  # to the room's log, as the statements' notices go
            lambda diag: notice(f"{diag.severity}:  {diag.message_primary}")
        )
        try:
            schema = (conn.execute("SELECT current_schema()").fetchone() or [""])[0]
            conn.execute(f"LISTEN {CHANNEL}")
            ready()
            pause = 1.0
            if lost:
                heard(None)
                lost = False
            while not stop.is_set():
                # one packet at a time, whole (a generator left inside a packet drops the
                # rest of it): a commit's notifications come together, and each host
                # they name is told once
                named: dict[str | None, None] = {}
                for note in conn.notifies(timeout=stop_check, stop_after=1):
                    room, tab, host = note.payload.partition("\t")
                    if room == schema:  # no tab: a room made before hosts were named
                        named[host if tab else None] = None
                for named_host in named:
                    heard(named_host)
        except psycopg.Error:
            lost = True
            stop.wait(pause)
        finally:
            conn.close()
