"""Several readers of one inbox at once: each message is handed to exactly one of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agent_room.room.service import Room

READERS = 4
MESSAGES = 300

READER_SCRIPT = """
import json, os, sys, time
from agent_room.room.service import Room
room = Room.open(os.environ)
seen, quiet = [], 0
while quiet < 100:
    got = [int(row["id"]) for row in room.inbox("bob")]
    seen += got
    quiet = 0 if got else quiet + 1
    time.sleep(0.002)
print(json.dumps(seen))
"""


def test_concurrent_inbox_readers_never_get_a_message_twice(room: Room, room_home: Path) -> None:
    room.join("alice")
    room.join("bob")
    env = {**os.environ, "AGENT_ROOM_HOME": str(room_home)}
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER_SCRIPT], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(READERS)
    ]
    sent = [room.send("alice", "bob", f"m{i}") for i in range(MESSAGES)]
    handed: list[int] = []
    for proc in readers:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        handed += json.loads(out)
    assert sorted(handed) == sorted(sent)  # every message once: none twice, none lost
