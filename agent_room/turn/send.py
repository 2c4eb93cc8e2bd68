"""``agent-room send``'s one parser, written for the hot path: the delivery clock starts here.

An agent's ``send`` is the first step of every delivery, so its command line is read
here with the standard library alone, in every shape: loading click or argparse and
building a parser would cost more than storing the message. The commonest shape (a
recipient, words, perhaps ``--as NAME``) is sent right here; any other (a handover, a
link, a body from a file or stdin, ``--help``) is left to the CLI's ``send`` command
(``cli.send``), which declares the same options for ``--help`` and the CLI reference and
hands its words back to this parser, then runs ``cli.send.send_message`` with what it read.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, NoReturn

    from agent_room.turn.room.service import RoomCore


SEND_TIMEOUT = 10.0
"""How long ``send`` waits for a busy room (the store's default)."""


VALUES = {
    "--file": "file",
    "--changed": "changed",
    "--files": "files",
    "--todo": "todo",
    "--contract": "contract",
    "--breaking": "breaking",
    "--as": "as_name",
}
"""The options of ``send`` taking a value, and the field each fills."""
FLAGS = {"--handover": "handover", "--link": "link", "--close-link": "close_link"}
"""Its options that are flags."""
HELP = ("-h", "--help")


def parse_send(args: Sequence[str]) -> dict[str, Any] | None:
    """``send``'s arguments as the fields ``cli.send.send_message`` takes; None when they ask
    for help. Read as argparse read them: options anywhere, ``--opt=value``, a unique
    prefix of an option, ``--`` before words that start with a dash."""
    fields: dict[str, Any] = {
        "recipient": None,
        "text": [],
        "file": None,
        **dict.fromkeys(("changed", "files", "todo", "contract", "breaking"), ""),
        **dict.fromkeys(FLAGS.values(), False),
        "as_name": None,
    }
    rest = iter(args)
    for word in rest:
        if word == "--":
            _words(fields, list(rest))
            break
        if not _an_option(word):
            _words(fields, [word])
            continue
        if word in HELP:
            return None
        name, equals, value = word.partition("=")
        option = _option(name)
        if option in FLAGS and not equals:
            fields[FLAGS[option]] = True
        elif option in VALUES:
            if not equals:
                given = next(rest, None)
                if given is None or _an_option(given):
                    _refuse(f"argument {option}: expected one argument")
                value = given
            fields[VALUES[option]] = value
        else:
            _refuse(f"unrecognized arguments: {word}")
    if fields["recipient"] is None:
        _refuse("the following arguments are required: @NAME")
    return fields


def _an_option(word: str) -> bool:
    """Whether ``word`` is an option, not a word of the body: ``-`` and ``-5`` are words."""
    return word.startswith("-") and word != "-" and not word[1:2].isdigit()


def _option(name: str) -> str:
    """The option ``name`` is, or a unique prefix of; ``name`` itself if none."""
    if name in VALUES or name in FLAGS or not name.startswith("--"):
        return name
    found = [o for o in (*VALUES, *FLAGS, "--help") if o.startswith(name)]
    if len(found) > 1:
        _refuse(f"ambiguous option: {name} could match {', '.join(found)}")
    return found[0] if found else name


def _words(fields: dict[str, Any], words: list[str]) -> None:
    if words and fields["recipient"] is None:
        fields["recipient"], words = words[0], words[1:]
    fields["text"].extend(words)


def _refuse(message: str) -> NoReturn:
    from agent_room.turn.core.errors import BadInput
    from agent_room.turn.core.printable import printable  # it quotes what was typed

    raise BadInput(f"{printable(message)} (see: agent-room send --help)")


def quick_send(args: Sequence[str], environ: Mapping[str, str]) -> int | None:
    """Run ``send ARGS`` in its commonest shape; None for any other (the CLI's)."""
    fields = parse_send(args)
    if fields is None:
        return None
    simple = {"recipient", "text", "as_name"}
    if not fields["text"] or any(v for k, v in fields.items() if k not in simple):
        return None

    from agent_room.turn.store.engine import begin_connecting
    from agent_room.turn.store.home import room_home

    begin_connecting(room_home(environ), SEND_TIMEOUT)  # on PostgreSQL, while the room loads
    from agent_room.turn.room.service import RoomCore

    room = RoomCore.open(environ, timeout=SEND_TIMEOUT)
    try:
        sender = room.identify(
            env_name=environ.get("AGENT_ROOM_NAME"),
            pane=environ.get("TMUX_PANE"),
            as_name=fields["as_name"],
        )
        send_chat(room, sender, fields["recipient"], " ".join(fields["text"]))
    finally:
        room.close()
    return 0


def send_chat(room: RoomCore, sender: str, recipient: str, body: str) -> int:
    """Queue a chat message and say so: a line for people on stderr (or why it is held:
    the loop breaker), and the id alone on stdout for a script (not on a terminal, where
    the line already shows it). The rules are ``room.outbox``'s."""
    from agent_room.turn.room.outbox import send_chat as queue

    sent = queue(room, sender, recipient, body)
    sys.stderr.write("".join(note + "\n" for note in sent.notes))
    if not sys.stdout.isatty():
        sys.stdout.write(f"{sent.message_id}\n")
    return sent.message_id
