"""The room's storage: one SQLite database in WAL mode inside a private directory.

Standard library only (the hook path writes here on every turn). Knows the schema and
SQL; knows nothing of tmux, processes or the console. The room service is its only
caller, so a second backend only has to provide the same ``RoomStore`` operations.
"""
