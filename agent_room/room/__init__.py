"""The application service: what the room does, for every entry point.

The command line, the hooks, the console and the workers all go through ``Room``; it
validates, applies the room's rules and calls the store. Imports stay on the standard
library at module level (hooks use this on every turn); the typed pydantic views are
loaded only by the methods that return them.
"""

from agent_room.room.service import Room

__all__ = ["Room"]
