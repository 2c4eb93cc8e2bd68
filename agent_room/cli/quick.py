"""``agent-room send @NAME TEXT...`` without argparse: the delivery clock starts here.

An agent's ``send`` is the first step of every delivery, so its commonest shape (a
recipient, words, perhaps ``--as NAME``) is read directly: building the parser and
loading argparse would cost more than storing the message. Any other shape (another
option, ``--help``, a body from stdin or a file) returns ``None`` and goes through the
full parser, so the two paths never disagree about what a command line means.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from agent_room.room import Room


SEND_TIMEOUT = 10.0
"""How long ``send`` waits for a busy room (the store's default)."""


def quick_send(args: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """Send ``@NAME WORDS...``; None when the command line needs the full parser."""
    if not args or args[0].startswith("-"):
        return None
    recipient, words, as_name = args[0], [], None
    rest = iter(args[1:])
    for word in rest:
        if word == "--as":
            as_name = next(rest, None)
            if as_name is None or as_name.startswith("-"):
                return None
        elif word.startswith("--as="):
            as_name = word.removeprefix("--as=")
        elif word.startswith("-"):
            return None
        else:
            words.append(word)
    if not words:
        return None

    from agent_room.store.engine import begin_connecting
    from agent_room.store.home import room_home

    begin_connecting(room_home(environ), SEND_TIMEOUT)  # on PostgreSQL, while Room loads
    from agent_room.room import Room

    room = Room.open(environ, timeout=SEND_TIMEOUT)
    try:
        sender = room.identify(
            env_name=environ.get("AGENT_ROOM_NAME"), pane=environ.get("TMUX_PANE"), as_name=as_name
        )
        send_chat(room, sender, recipient, " ".join(words))
    finally:
        room.close()
    return 0


def send_chat(room: Room, sender: str, recipient: str, body: str) -> int:
    """Queue a chat message and say so: a line for people on stderr (or why it is held:
    the loop breaker), and the id alone on stdout for a script (not on a terminal, where
    the line already shows it)."""
    from agent_room.store.wake import listening

    message_id, hold = room.send_checked(sender, recipient, body)
    if hold is not None:
        from agent_room.core.loops import sender_notice

        sys.stderr.write(sender_notice(message_id, *hold) + "\n")
    elif recipient.lstrip("@").lower() == "operator":
        sys.stderr.write(f"message #{message_id} left for the operator (console, notifications)\n")
    else:
        hint = "" if listening(room.home) else _no_listener(room, recipient)
        sys.stderr.write(f"message #{message_id} queued for {recipient}{hint}\n")
        name = recipient.lstrip("@").lower()
        held_by = room.store.over_budget(name, room.clock())
        if held_by is not None:  # the note to the sender: it waits, do not wait for it
            from agent_room.core.usage import over_text

            sys.stderr.write(f"{over_text(name, held_by)}; go on with your own work\n")
    if not sys.stdout.isatty():
        sys.stdout.write(f"{message_id}\n")
    return message_id


def _no_listener(room: Room, recipient: str) -> str:
    """Why nothing on this host delivers (asked only then): in a room across machines the
    recipient's own host delivers, and this host's FIFO says nothing of it."""
    from agent_room.core.names import parse_name

    row = room.store.holder(parse_name(recipient, allow_reserved=True))
    host = row.get("host") if row else None
    if host is None or host == room.store.host:
        if _deliverer_alive(room):
            return ""  # it runs, but cannot be poked (its FIFO was replaced): it says so
        return " (no deliverer is running: see `agent-room watch`)"
    if host in room.silent_hosts(room.clock()):
        from agent_room.core.printable import printable

        return f" (host {printable(host)} is silent: delivered once its watch is back)"
    return ""


def _deliverer_alive(room: Room) -> bool:
    """Whether the holder of this host's deliverer lease is alive (asked only when its
    FIFO did not answer)."""
    from agent_room.adapters.procfs import is_alive
    from agent_room.store.delivery import deliverer_lease

    lease = room.store.lease(deliverer_lease(room.store))
    return bool(lease and lease["pid"] and is_alive(int(lease["pid"]), lease["pid_start"]))
