"""Claude Code's HTTP hooks, handled by the room's running server: no process per event.

``agent-room start`` gives a Claude Code agent ``"type": "http"`` hooks for the events of
every turn (``HTTP_EVENTS``) pointing here, with its secret in the Authorization header;
the plugin's command hook for those events then steps aside while this server is
serving (``plugin/bin/agent-room-hook``), and takes over when it is not. The event goes
through the same handler as the command hook's (``agent_room.turn.hooks.handlers``), on one
of the server's open rooms, so its effect and its answer are the same.

Registration stays with the command hook (SessionStart: it reads the agent's process and
pane, which only a process started by the client can see): an event of a session the
room does not know is logged and left, never registered from the server's own process.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_room.mcp.tools import Rooms
from agent_room.room.access import HTTP_EVENTS, Tokens, bearer
from agent_room.turn.core.errors import RoomError
from agent_room.turn.hooks import HOOK_TIMEOUT, log_error
from agent_room.turn.hooks.handlers import handle
from agent_room.turn.hooks.payload import READ_LIMIT, HookPayload, HookProblem

HOOKS_PATH = "/hooks/{event}"


class HookEndpoint:
    """``POST /hooks/EVENT``: one hook event of the agent whose secret came with it."""

    def __init__(self, home: str, tokens: Tokens, rooms: Rooms) -> None:
        self.home = home
        self.tokens = tokens
        self.rooms = rooms

    async def __call__(self, request: Request) -> Response:
        event = str(request.path_params.get("event", ""))
        if event not in HTTP_EVENTS:
            return Response(status_code=404)
        name = self.tokens.name_of(bearer(request.headers.get("authorization")))
        raw = await request.body()
        if name is None or len(raw) > READ_LIMIT:
            return Response(status_code=401 if name is None else 413)
        output = await anyio.to_thread.run_sync(functools.partial(self._handle, raw, event, name))
        return JSONResponse(output) if output else Response(status_code=200)

    def _handle(self, raw: bytes, event: str, name: str) -> dict[str, Any] | None:
        """The command hook's work for one event (never an error to the client: a hook
        never breaks the agent); ``None``: nothing to say."""
        try:
            payload = HookPayload.parse(raw, event)
            room = self.rooms.get()
            if room.store.session(payload.session_id) is None:
                raise HookProblem(  # noqa: TRY301 - logged below, as every problem
                    f"session {payload.session_id} of @{name} is not registered (its"
                    " SessionStart hook registers it): the event is left"
                )
            environ = {"AGENT_ROOM_NAME": name, "AGENT_ROOM_HOME": self.home}
            return handle(payload, environ, self.home, HOOK_TIMEOUT, room=room)
        except (HookProblem, RoomError) as problem:
            log_error(self.home, f"http {event}", str(problem))
        except Exception as exc:  # noqa: BLE001 - a hook must never break the agent
            self.rooms.drop()
            log_error(self.home, f"http {event}", f"internal error: {type(exc).__name__}: {exc}")
        return None
