"""The application service: what the room does, for every entry point.

The command line, the console, the room's server and the workers go through ``Room``; it
validates, applies the room's rules and calls the store. The rules a hook or a send
applies are ``RoomCore``'s (``agent_room.turn.room``), which ``Room`` extends.
"""

from agent_room.room.service import Room

__all__ = ["Room"]
