"""The turn path: everything an agent's turn or a ``send`` runs, fenced.

Every agent runs ``agent-room hook EVENT`` on each turn, and agents send with
``agent-room send``; a tmux status bar runs ``agent-room status`` every few seconds. Those
three start a Python process each time, so what they load is their cost. This package is
all that they load: the entry point (``agent_room.cli.main``) hands them here before it
imports anything else, and a test runs each in a fresh interpreter with ``-X importtime``
and fails if it loads a module of the package outside ``agent_room.turn``, or anything
beyond the standard library (``tests/turn/test_fence.py``).

Inside the fence, start-up cost is a design constraint, and the code says so where it
shows: ``TYPE_CHECKING = False`` (``typing`` loads ``re``), imports inside the functions
of rare branches, JSON through ``core.fastjson``, ``Record`` in place of dataclasses. None
of that is allowed outside it: the rest of the package is ordinary typed Python and may
import from here (this is the bottom layer), never the reverse (the import-linter
contracts in ``pyproject.toml``).

- ``hooks``: the hook events (``run_hook``), their payloads and what each does.
- ``send``: ``agent-room send`` for a chat message; any other shape is the CLI's.
- ``status``: the one-line summary for a status bar.
- ``room``: the rules a turn applies (``RoomCore``, the registry, delivery at a turn's
  edge, the outbox of a chat message).
- ``store``: the room's database on SQLite or PostgreSQL, and the statements of the turn.
- ``core``: names, states, prompts and the loop rules the above share with the rest.
"""
