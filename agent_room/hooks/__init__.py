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

from agent_room.core import fastjson
from agent_room.core.errors import RoomError
from agent_room.hooks.payload import HookPayload, HookProblem, read_stdin
from agent_room.store.home import append_error_log, room_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO, Any

HOOK_TIMEOUT = 3.0
"""How long a hook waits for a busy room before giving up (and logging it)."""
SESSION_END_TIMEOUT = 0.5
"""SessionEnd has a 1.5 s budget in all: one small write, or nothing."""


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
        timeout = SESSION_END_TIMEOUT if payload.event == "SessionEnd" else HOOK_TIMEOUT
        from agent_room.store.engine import begin_connecting

        begin_connecting(home, timeout)  # on PostgreSQL, while the handlers load
        from agent_room.hooks.handlers import handle

        output = handle(payload, environ, home, timeout)
        if output and client != "claude":
            from agent_room.core.clients import client_output

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


def additional_context(event: str, text: str) -> dict[str, Any]:
    """The hook output that adds ``text`` to the model's context."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
