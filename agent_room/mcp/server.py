"""The MCP server: the room's tools on the official SDK (``mcp``), over stdio or HTTP.

Over HTTP one server serves every agent of the room (``serve.Serving`` runs it inside
``watch``): each request carries its agent's secret and the server maps it to the name
(``tokens``), so who calls is never a tool's argument. Over stdio (``agent-room mcp``
with no server to relay to) the server serves the one agent whose environment it runs
in, identified as the command line identifies it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from agent_room.mcp.tools import Caller, ClientFactory, Rooms, RoomTools, ToolFailed
from agent_room.room.access import Tokens, bearer
from agent_room.room.outbox import SendRequest
from agent_room.room.service import Room
from agent_room.turn.core.errors import BadInput

SERVER_NAME = "agent-room"
"""The server's name: clients prefix its tools with it (``mcp__agent-room__send_message``)."""
INSTRUCTIONS = (
    "The agent room: other coding agents and the operator. Send directed messages and"
    " handovers with send_message, read yours with read_inbox, see who is here with who,"
    " read a linked peer's last turns with get_session_data, keep an anchor timer with"
    " set_timer, and ask an agent in another repository with ask."
)

Headers = Mapping[str, str] | None


@dataclass(frozen=True)
class Identity:
    """Who calls, for a request's headers: the secret's agent (HTTP), or the agent whose
    environment the server runs in (stdio)."""

    environ: Mapping[str, str]
    tokens: Tokens | None = None
    """Set for HTTP: a request is answered only for a known secret."""

    def caller(self, headers: Headers) -> Caller:
        """The ``Caller`` of one request."""

        def resolve(room: Room) -> str:
            if self.tokens is not None:
                token = bearer(headers.get("authorization")) if headers else None
                name = self.tokens.name_of(token)
                if name is None:
                    raise BadInput("this request carries no secret of an agent of the room")
                return room.identify(env_name=name, pane=None, as_name=None)
            return room.identify(
                env_name=self.environ.get("AGENT_ROOM_NAME"),
                pane=self.environ.get("TMUX_PANE"),
                as_name=None,
            )

        return resolve


def build_server(
    identity: Identity, ask_client: ClientFactory | None = None, rooms: Rooms | None = None
) -> MCPServer:
    """The room's tools on an ``MCPServer`` (``rooms``: the open rooms to call them on)."""
    server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    rooms = rooms or Rooms(identity.environ)

    def tools(ctx: Context) -> RoomTools:
        headers = ctx.headers if ctx.request_context.request is not None else None
        return RoomTools(rooms, identity.caller(headers), ask_client)

    def run(call: Callable[[], str]) -> str:
        try:
            return call()
        except ToolFailed as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    def send_message(
        recipient: Annotated[str, Field(description="who gets it: @name, or @operator")],
        text: Annotated[str, Field(description="the message (a handover's notes)")],
        ctx: Context,
        handover: Annotated[
            bool, Field(description="a handover: held until the operator approves it")
        ] = False,
        changed: Annotated[str, Field(description="handover: what changed")] = "",
        todo: Annotated[str, Field(description="handover: what the recipient needs to do")] = "",
        files: Annotated[str, Field(description="handover: files affected")] = "",
        contract: Annotated[str, Field(description="handover: schema / contract details")] = "",
        breaking: Annotated[str, Field(description="handover: breaking changes")] = "",
        link: Annotated[
            bool,
            Field(description="open a link: your turns' final outputs cross to each other"),
        ] = False,
        close_link: Annotated[
            bool, Field(description="deliver the text, then sever your link (initiator only)")
        ] = False,
    ) -> str:
        """Send a directed message to another agent of the room (never a broadcast).

        With handover the message waits for the operator's approval; with link a
        bidirectional link opens (each side's final output crosses to the other);
        close_link delivers this last message and severs the link you opened."""
        request = SendRequest(
            recipient,
            text,
            handover=handover,
            changed=changed,
            todo=todo,
            files=files,
            contract=contract,
            breaking=breaking,
            link=link,
            close_link=close_link,
        )
        return run(lambda: tools(ctx).send_message(request))

    @server.tool()
    def read_inbox(
        ctx: Context,
        peek: Annotated[bool, Field(description="show without marking read")] = False,
    ) -> str:
        """Your unread messages, oldest first (marked read unless peek)."""
        return run(lambda: tools(ctx).read_inbox(peek_only=peek))

    @server.tool()
    def who(ctx: Context) -> str:
        """The sessions in the room: name, state, agent, links, unread counts (JSON)."""
        return run(lambda: tools(ctx).who())

    @server.tool()
    def get_session_data(
        name: Annotated[str, Field(description="the agent to read: yourself or a linked peer")],
        ctx: Context,
        turns: Annotated[int, Field(description="how many of its last turns", ge=1)] = 3,
        tools_used: Annotated[bool, Field(description="list its tool calls too")] = False,
    ) -> str:
        """A peer's last turns from its transcript: prompts, what it wrote, optionally its
        tool calls. Reading, not engaging: nothing is sent. Only yourself and peers you
        have an open link with."""
        return run(lambda: tools(ctx).get_session_data(name, turns=turns, tools=tools_used))

    @server.tool()
    def set_timer(
        intent: Annotated[str, Field(description="anchor, check or wait")],
        duration: Annotated[str, Field(description="when it fires, e.g. 90s, 5m, 1h")],
        text: Annotated[str, Field(description="what to do when it fires")],
        ctx: Context,
    ) -> str:
        """A timer with intent: ANCHOR returns you to your own work (always keep one),
        CHECK reads a named peer's status, WAIT checks whether an answer arrived. It
        reaches you as a message when it fires."""
        return run(lambda: tools(ctx).set_timer(intent, duration, text))

    @server.tool()
    def ask(
        repo: Annotated[str, Field(description="the repository (path or @name) to ask")],
        question: Annotated[str, Field(description="the question")],
        ctx: Context,
        new: Annotated[bool, Field(description="start a new session there")] = False,
        resume: Annotated[str | None, Field(description="resume this session id")] = None,
        max_turns: Annotated[int | None, Field(description="agentic turns at most")] = None,
    ) -> str:
        """Ask a headless agent in another repository (the intercom); its answer. It
        resumes the session that knows the topic, or starts one."""
        return run(
            lambda: tools(ctx).ask(repo, question, new=new, resume=resume, max_turns=max_turns)
        )

    return server
