"""``peek``: read a peer's recent turns from its transcript (seed 001's get_session_data).

A link carries only the final output of each turn; peeking is the deep dive beneath it:
the prompts, what the agent wrote and, on request, the tools it called. It is reading,
not engaging, so it sends nothing. Who may read whom: the operator anyone; an agent
itself, and the peers it has a live (open or frozen) link with, since a link is the
room's record that two agents work together. Everyone else is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_room.adapters.transcripts import Tail, read_tail
from agent_room.room.service import Room
from agent_room.store.links import LinkStore
from agent_room.turn.core.errors import NotFound, Refused
from agent_room.turn.core.names import parse_name
from agent_room.turn.store.hosts import on_this_host

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows


@dataclass(frozen=True, slots=True)
class Peek:
    """A session's last turns, with what identifies it."""

    name: str
    session_id: str | None
    state: str
    transcript_path: str
    tail: Tail


def check_access(room: Room, viewer: str | None, target: Row) -> None:
    """Refuse an agent that is neither ``target`` nor linked to it (``None``: operator)."""
    if viewer is None or viewer == target["name"]:
        return
    me = room.require_member(viewer)
    mine, theirs = me["session_id"], target["session_id"]
    if mine and theirs and LinkStore(room.store).live_link(mine, theirs) is not None:
        return
    raise Refused(
        f"@{viewer} has no open link to @{target['name']}: an agent peeks only at peers it"
        f" is linked to (open one with: agent-room send @{target['name']} --link TEXT)"
    )


def peek(room: Room, who: str, *, viewer: str | None, turns: int) -> Peek:
    """The last ``turns`` turns of the session named ``who``, as ``viewer`` may see them."""
    name = parse_name(who)
    target = room.require_member(name)
    check_access(room, viewer, target)
    path = target["transcript_path"]
    if not path and not target["session_id"]:
        raise NotFound(
            f"@{name} has no transcript: no agent session has registered under this name"
            " yet (a name joined by hand)"
        )
    if not path:
        raise NotFound(f"@{name} has no transcript: @{name}'s client has not told the room one")
    if not on_this_host(room.store, target):
        raise Refused(f"@{name} runs on {target['host']}, where its transcript is: peek from there")
    try:
        tail = read_tail(str(path), turns)
    except FileNotFoundError:
        raise NotFound(
            f"@{name}'s transcript {path} does not exist (yet: the client writes it with"
            " the first turn)"
        ) from None
    except OSError as exc:
        raise Refused(f"cannot read @{name}'s transcript {path}: {exc.strerror}") from None
    return Peek(name, target["session_id"], str(target["state"]), str(path), tail)
