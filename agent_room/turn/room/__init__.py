"""The rules a turn applies: ``RoomCore``, the registry of sessions, delivery at a turn's
edge and the outbox of a chat message."""
