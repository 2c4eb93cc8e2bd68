"""``agent-room demo``: a short scripted session in a throw-away room.

Shows a newcomer the bus without anything else installed: two agents join, one sends a
message and a handover, the operator approves, the other reads its inbox.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from agent_room.core.format import format_messages
from agent_room.core.handover import HandoverFields
from agent_room.room import Room
from agent_room.store.sqlite import SqliteStore


def _say(text: str, pause: float) -> None:
    print(f"\n\033[1m$ {text}\033[0m", flush=True)
    time.sleep(pause)


def cmd_demo(args: argparse.Namespace) -> int:
    pause = 0.0 if args.fast else 0.6
    with tempfile.TemporaryDirectory(prefix="agent-room-demo-") as tmp:
        room = Room(SqliteStore(Path(tmp) / "room"))
        print(f"A throw-away room in {tmp}/room", flush=True)
        _say("agent-room join backend && agent-room join frontend", pause)
        room.join("backend")
        room.join("frontend")
        print("@backend joined the room\n@frontend joined the room")
        _say('AGENT_ROOM_NAME=backend agent-room send @frontend "GET /tasks is live"', pause)
        mid = room.send("backend", "frontend", "GET /tasks is live: { id, title, done }[]")
        print(f"message #{mid} queued for @frontend")
        _say(
            "AGENT_ROOM_NAME=backend agent-room send @frontend --handover --changed ... --todo ...",
            pause,
        )
        hid = room.send_handover(
            "backend",
            "frontend",
            fields=HandoverFields(
                what_changed="Added GET /tasks and PATCH /tasks/:id",
                what_to_do="Build the task list view against the new endpoints",
                files="api/tasks.py; api/schema.py",
                contract="Task = { id: string, title: string, done: boolean }",
            ),
        )
        print(f"handover #{hid} to @frontend is waiting for approval")
        _say(f"agent-room approve {hid}", pause)
        room.approve(hid)
        print(f"handover #{hid} approved")
        _say("AGENT_ROOM_NAME=frontend agent-room inbox", pause)
        sys.stdout.write(format_messages(room.inbox("frontend")))
        _say("AGENT_ROOM_NAME=backend agent-room inbox", pause)
        sys.stdout.write(format_messages(room.inbox("backend")))
        room.close()
    print("\nThe room is gone again. Run `agent-room --help` for every command.")
    return 0
