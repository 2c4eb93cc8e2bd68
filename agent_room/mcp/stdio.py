"""The room's tools served over stdio by this process, for the agent whose environment it
runs in (``agent-room mcp`` when no server of the room can be relayed to)."""

from __future__ import annotations

import anyio

from agent_room.cli.ask import HeadlessClients
from agent_room.config.settings import RoomSettings
from agent_room.mcp.server import Identity, build_server


def serve_stdio(environ: dict[str, str]) -> int:
    """Serve until the client closes stdin."""
    server = build_server(Identity(environ), HeadlessClients(RoomSettings.load(environ)))
    anyio.run(server.run_stdio_async)
    return 0
