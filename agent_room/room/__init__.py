"""The application service: what the room does, for every entry point.

The command line, the console, the room's server and the workers go through ``Room``
(``agent_room.room.service``); it validates, applies the room's rules and calls the
store. The rules a hook or a send applies are ``RoomCore``'s (``agent_room.turn.room``),
which ``Room`` extends. This package's own module imports nothing, so that a command
that reads one part of the room (``who``: the roster) loads that part alone.
"""
