"""The console's widgets: each draws one part of a ``RoomSnapshot``."""
