"""The room's settings: one model (``config.settings.RoomSettings``) fed by the
``AGENT_ROOM_*`` variables and the room's ``room.conf``, and the notifier's
(``config.notify.NotifySettings``), which the console and the watch share.

Above the store (the room's file is read through it), below everything that runs the
room. This module imports nothing: the console opens without loading pydantic.
"""
