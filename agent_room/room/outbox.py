"""Sending, as every entry point does it: one request, its checks, and what to tell the sender.

``agent-room send`` (the command line) and the ``send_message`` tool (``agent_room.mcp``)
both come here, so a chat message, a handover, a link opened or closed are checked,
stored and audited the same way whichever door the sender used. What comes back is the
message's id and the lines the sender reads (the command line prints them on stderr, the
tool returns them). Light on imports: the command line's ``send`` is on the hot path.
"""

from __future__ import annotations

from agent_room.core.errors import BadInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_room.room.service import Room


class Sent:
    """A message stored for its recipient: its id and what the sender is told."""

    __slots__ = ("message_id", "notes")

    def __init__(self, message_id: int, notes: list[str]) -> None:
        self.message_id = message_id
        self.notes = notes
        """Lines for the sender: queued, held, on which link, a cycle warning."""

    def text(self) -> str:
        """The notes and the id, as a tool answers."""
        return "\n".join([*self.notes, f"message id: {self.message_id}"])


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


def send_chat(room: Room, sender: str, recipient: str, body: str) -> Sent:
    """Queue a chat message; the note says it is queued, or why it is held (the loop
    breaker), or that nothing on this host delivers."""
    from agent_room.store.wake import listening

    message_id, hold = room.send_checked(sender, recipient, body)
    if hold is not None:
        from agent_room.core.loops import sender_notice

        note = sender_notice(message_id, *hold)
    elif recipient.lstrip("@").lower() == "operator":
        note = f"message #{message_id} left for the operator (console, notifications)"
    else:
        hint = "" if listening(room.home) else _no_listener(room, recipient)
        note = f"message #{message_id} queued for {recipient}{hint}"
        name = recipient.lstrip("@").lower()
        held_by = room.store.over_budget(name, room.clock())
        if held_by is not None:  # the note to the sender: it waits, do not wait for it
            from agent_room.core.usage import over_text

            return Sent(message_id, [note, f"{over_text(name, held_by)}; go on with your own work"])
    return Sent(message_id, [note])


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


def _linked(room: Room, sender: str, request: SendRequest, no_body: str) -> Sent:
    from agent_room.room.links import Links

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
    from agent_room.core.handover import HandoverFields

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
    from agent_room.room.worktrees import code_of  # the sender's branch and commit

    code = code_of(room, sender)
    message_id = room.send_handover(
        sender, request.recipient, fields=fields, body=request.body, code=code
    )
    notes = [f"handover #{message_id} to {request.recipient} is waiting for approval"]
    row = room.store.handover(message_id)
    cycle = room.handover_cycles([row]).get(message_id) if row else None
    if cycle:
        from agent_room.core.cycles import render_cycle

        notes.append(
            f"warning: handover #{message_id} closes a cycle: {render_cycle(cycle)}"
            " (the operator sees it before deciding)"
        )
    return Sent(message_id, notes)
