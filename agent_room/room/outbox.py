"""Sending, as every entry point does it: one request, its checks, and what to tell the sender.

``agent-room send`` (the command line) and the ``send_message`` tool (``agent_room.mcp``)
both come here, so a chat message, a handover, a link opened or closed are checked,
stored and audited the same way whichever door the sender used. What comes back is the
message's id and the lines the sender reads (the command line prints them on stderr, the
tool returns them). A plain chat message is ``agent_room.turn.room.outbox``'s, which
``agent-room send`` reaches without loading this module.
"""

from __future__ import annotations

from agent_room.core.handover import HandoverFields
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.room.worktrees import code_of
from agent_room.turn.core.cycles import render_cycle
from agent_room.turn.core.errors import BadInput
from agent_room.turn.room.outbox import Sent, send_chat


class SendRequest:
    """What a sender asks for: the body, and optionally a handover's fields or a link."""

    __slots__ = (
        "body",
        "breaking",
        "changed",
        "close_link",
        "contract",
        "files",
        "handover",
        "link",
        "recipient",
        "todo",
    )

    def __init__(
        self,
        recipient: str,
        body: str | None,
        *,
        handover: bool = False,
        changed: str = "",
        todo: str = "",
        files: str = "",
        contract: str = "",
        breaking: str = "",
        link: bool = False,
        close_link: bool = False,
    ) -> None:
        self.recipient = recipient
        self.body = body
        self.handover = handover
        self.changed = changed
        self.todo = todo
        self.files = files
        self.contract = contract
        self.breaking = breaking
        self.link = link
        self.close_link = close_link

    @property
    def structured(self) -> bool:
        """Whether a handover's fields were given (then the seed's template is the body)."""
        return any((self.changed, self.todo, self.files, self.contract, self.breaking))


NO_BODY = "no message body: give TEXT, --file FILE, or pipe it on stdin"


def send(room: Room, sender: str, request: SendRequest, *, no_body: str = NO_BODY) -> Sent:
    """Check and store what ``sender`` asks for; ``no_body`` says how to give a body."""
    check_fields(request)
    if request.link or request.close_link:
        return _linked(room, sender, request, no_body)
    if not request.handover:
        if request.body is None:
            raise BadInput(no_body)
        return send_chat(room, sender, request.recipient, request.body)
    return _handover(room, sender, request)


def check_fields(request: SendRequest) -> None:
    """Refuse a handover's fields on what is not a handover (before a body is read)."""
    if request.structured and not request.handover:
        raise BadInput("--changed, --todo, --files, --contract, --breaking need --handover")


def _linked(room: Room, sender: str, request: SendRequest, no_body: str) -> Sent:

    if request.link and request.close_link:
        raise BadInput("--link opens a link and --close-link closes it: give one")
    if request.handover:
        raise BadInput("a handover cannot open or close a link: send it on its own")
    if request.body is None:
        raise BadInput(no_body)
    links = Links(room)
    recipient = request.recipient
    if request.close_link:
        link_id, message_id = links.close_with(sender, recipient, request.body)
        return Sent(
            message_id, [f"message #{message_id} queued for {recipient}; link #{link_id} is closed"]
        )
    link, created, message_id = links.open(sender, recipient, request.body)
    state = "opened" if created else f"reused ({link['state']})"
    left = link["budget"] - link["crossings"]
    return Sent(
        message_id,
        [
            f"message #{message_id} queued for {recipient} on link #{link['id']}"
            f" ({state}; {left} crossings left)"
        ],
    )


def _handover(room: Room, sender: str, request: SendRequest) -> Sent:

    fields = None
    if request.structured:
        fields = HandoverFields(
            what_changed=request.changed,
            what_to_do=request.todo,
            files=request.files,
            contract=request.contract,
            breaking=request.breaking,
            notes=request.body or "",
        )

    code = code_of(room, sender)
    message_id = room.send_handover(
        sender, request.recipient, fields=fields, body=request.body, code=code
    )
    notes = [f"handover #{message_id} to {request.recipient} is waiting for approval"]
    row = room.store.handover(message_id)
    cycle = room.handover_cycles([row]).get(message_id) if row else None
    if cycle:
        notes.append(
            f"warning: handover #{message_id} closes a cycle: {render_cycle(cycle)}"
            " (the operator sees it before deciding)"
        )
    return Sent(message_id, notes)
