"""``agent-room hook EVENT``: what every agent session tells the room, on every turn.

Claude Code's plugin runs ``agent-room hook EVENT``; Codex CLI and Gemini CLI, started by
the room, run ``agent-room hook --client codex|gemini EVENT`` with their own event names
and payloads, which ``core.clients`` puts in the room's terms first (and the answer back
in theirs).

A hook never breaks the agent: whatever goes wrong, it exits 0, writes one line to the
room's error log and changes nothing else. It stays on the standard library (sqlite3,
/proc, JSON through ``core.fastjson``, no ``re``), because it runs on every turn of every
agent (``tests/hooks/test_hook_imports.py`` holds it there).
"""

from __future__ import annotations

import sys
import time

from agent_room.turn.core import fastjson
from agent_room.turn.core.errors import RoomError, RoomUnavailable
from agent_room.turn.hooks.payload import HookPayload, HookProblem, read_stdin
from agent_room.turn.store.home import append_error_log, room_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

HOOK_TIMEOUT = 3.0
"""How long one attempt of a hook waits for a busy room."""
HOOK_BUDGET = 4.0
"""Seconds a hook spends on the room in all, retries included, before it gives up and
logs it: the clients kill a hook at 5 s (the room's plugin and launcher set that)."""
SESSION_END_TIMEOUT = 0.5
"""One attempt of SessionEnd: one small write, or nothing."""
SESSION_END_BUDGET = 1.2
"""SessionEnd has a 1.5 s budget in all, the interpreter's start included."""
SHORT_BUDGET = 2.5
"""Codex clamps its Interrupt hook to 3 s."""
RETRY_PAUSE = 0.2
"""Seconds between two attempts: a restarting server or a passing lock clears."""


def log_error(home: str, event: str, problem: str) -> None:
    """Append one record of this hook to the room's error log (``append_error_log``)."""
    append_error_log(home, f"hook {event[:100] or '-'}", problem)


def run_hook(argv: Sequence[str], environ: Mapping[str, str], stdin: IO[bytes]) -> int:
    """Run one hook invocation; always return 0."""
    client, event = "claude", argv[0] if argv else ""
    if event == "--client" and len(argv) > 2:  # Codex and Gemini: `--client KIND EVENT`
        client, event = argv[1], argv[2]
    logged = event if client == "claude" else f"{client} {event}"
    try:
        home = room_home(environ)
    except RoomError as problem:  # a relative AGENT_ROOM_HOME: said in the default room
        read_stdin(stdin)
        log_error(room_home({"HOME": environ.get("HOME", "")}), logged, str(problem))
        return 0
    try:
        raw, cut = read_stdin(stdin)
        payload = HookPayload.parse(raw, event, cut=cut, client=client)
        output = _handle_retrying(payload, environ, home)
        if output and client != "claude":
            from agent_room.turn.core.clients import client_output

            output = client_output(client, event, output)
    except (HookProblem, RoomError) as problem:
        log_error(home, logged, str(problem))
        return 0
    except Exception as exc:  # noqa: BLE001 - a hook must never break the agent
        log_error(home, logged, f"internal error: {type(exc).__name__}: {exc}")
        return 0
    if output:
        sys.stdout.write(fastjson.dumps(output, ensure_ascii=False))
        sys.stdout.flush()
    return 0


def _handle_retrying(
    payload: HookPayload, environ: Mapping[str, str], home: str
) -> dict[str, Any] | None:
    """Apply the event, again while the room could not be written (a lock held past the
    busy timeout, a PostgreSQL server restarting), within the event's budget; then the
    last fault is raised (and logged). The event is one transaction, so a fault before
    its commit left nothing of it; one after (closing the room) is not tried again. A
    lost event is healed by the deliverer from what it can observe, never left standing."""
    from _sqlite3 import OperationalError  # (the store's; PostgreSQL's faults map onto it)

    from agent_room.turn.store.db import write_transaction
    from agent_room.turn.store.engine import begin_connecting

    if payload.event == "SessionEnd":
        timeout, budget = SESSION_END_TIMEOUT, SESSION_END_BUDGET
    else:
        timeout = HOOK_TIMEOUT
        budget = SHORT_BUDGET if payload.event == "Interrupt" else HOOK_BUDGET
    deadline = time.monotonic() + budget
    begin_connecting(home, timeout)  # on PostgreSQL, while the handlers load
    from agent_room.turn.hooks.handlers import handle

    while True:
        written = write_transaction.commits
        try:
            return handle(payload, environ, home, timeout)
        except (RoomUnavailable, OperationalError) as problem:
            left = deadline - time.monotonic() - RETRY_PAUSE
            if write_transaction.commits != written or left <= 0.05 or not _passing(problem):
                raise
            time.sleep(RETRY_PAUSE)
            timeout = min(timeout, left)


PASSING = ("locked", "busy", "unreachable")
"""Words of a fault that passes by itself: a lock another process holds, a PostgreSQL
server out of reach (restarting). A full disk or a damaged file is said at once."""


def _passing(problem: Exception) -> bool:
    said = str(problem)
    return any(word in said for word in PASSING)
