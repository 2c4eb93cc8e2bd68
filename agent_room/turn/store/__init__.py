"""The room's storage: one SQLite database in WAL mode inside a private directory, or,
for a room across machines, a PostgreSQL schema (``store.engine`` chooses).

Standard library only (the hook path writes here on every turn; PostgreSQL is reached
through libpq with ctypes). Knows the schema and SQL; knows nothing of tmux, processes
or the console. The store code is written once against SQLite's connection interface;
``store.postgres`` offers that interface on PostgreSQL.
"""
