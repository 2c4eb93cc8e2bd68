"""A new room opened by many processes at once: every one of them gets in."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.sqlite

PROCESSES = 8
ROOMS = 80

OPENER_SCRIPT = """
import sys, time
from agent_room.turn.core.errors import RoomError
from agent_room.turn.store.db import connect
base, rooms, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
time.sleep(max(0.0, start - time.time()))
failed = 0
for index in range(rooms):
    try:
        conn = connect(f"{base}/room{index}")
        conn.execute("INSERT INTO events (at, kind, actor) VALUES (0, 'probe', 'test')")
        conn.close()
    except RoomError as exc:
        failed += 1
        print(exc, file=sys.stderr)
print(failed)
"""


def test_many_processes_open_fresh_rooms_at_once(tmp_path: Path) -> None:
    start = time.time() + 1.5  # every process imported and waiting: they open together
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER_SCRIPT, str(tmp_path), str(ROOMS), str(start)],
            env=os.environ.copy(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    results = [proc.communicate(timeout=120) for proc in procs]
    assert [(int(out), err) for out, err in results] == [(0, "")] * PROCESSES
