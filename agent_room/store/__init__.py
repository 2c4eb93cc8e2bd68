"""The room's storage beyond the turn path: links, memory, the intercom, usage, entities.

The database itself (connection, schema, migrations, both engines) and the tables a turn
writes are ``agent_room.turn.store``'s; the stores here build on its ``StoreBase``.
"""
