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
    the line already shows it). The rules are ``room.outbox``'s."""
    from agent_room.room.outbox import send_chat as queue

    sent = queue(room, sender, recipient, body)
    sys.stderr.write("".join(note + "\n" for note in sent.notes))
    if not sys.stdout.isatty():
        sys.stdout.write(f"{sent.message_id}\n")
    return sent.message_id
