"""Many writers at once, and a writer killed mid-write: the store stays whole."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.poll import wait_for

SENDERS = 20
PER_SENDER = 500
RECIPIENTS = ("r0", "r1", "r2", "r3")

SENDER_SCRIPT = """
import os, sys
from agent_room.room.service import Room
room = Room.open(os.environ)
me = sys.argv[1]
recipients = sys.argv[2].split(",")
for seq in range(int(sys.argv[3])):
    room.send(me, recipients[seq % len(recipients)], f"{me}:{seq}:" + "x" * int(sys.argv[4]))
"""


def _spawn(home: Path, name: str, count: int, pad: int = 10) -> subprocess.Popen[bytes]:
    env = {**os.environ, "AGENT_ROOM_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-c", SENDER_SCRIPT, name, ",".join(RECIPIENTS), str(count), str(pad)],
        env=env,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_twenty_processes_each_message_once_in_order(room: Room, room_home: Path) -> None:
    senders = [f"s{i}" for i in range(SENDERS)]
    for name in [*senders, *RECIPIENTS]:
        room.join(name)
    procs = [_spawn(room_home, name, PER_SENDER) for name in senders]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()

    rows = room.store.conn.execute(
        "SELECT id, sender, recipient, body FROM messages ORDER BY id"
    ).fetchall()
    assert len(rows) == SENDERS * PER_SENDER
    seen: dict[str, list[int]] = {}
    for row in rows:
        name, seq, _ = row["body"].split(":")
        assert name == row["sender"]
        assert row["recipient"] == RECIPIENTS[int(seq) % len(RECIPIENTS)]
        seen.setdefault(name, []).append(int(seq))
    for name in senders:
        # ordered by id, each sender's sequence is exactly 0..499: once each, in order
        assert seen[name] == list(range(PER_SENDER)), name
    events = room.store.conn.execute(
        "SELECT count(*) FROM events WHERE kind = 'message.sent'"
    ).fetchone()[0]
    assert events == SENDERS * PER_SENDER


@pytest.mark.sqlite
def test_writer_killed_mid_write_leaves_a_valid_store(room: Room, room_home: Path) -> None:
    room.join("killed")
    for name in RECIPIENTS:
        room.join(name)
    proc = _spawn(room_home, "killed", 1_000_000, pad=50_000)
    wait_for(
        lambda: room.store.conn.execute("SELECT count(*) FROM messages").fetchone()[0] >= 20,
        timeout=20,
        step=0.02,
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    conn = sqlite3.connect(room_home / "room.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    bodies = [r[0] for r in conn.execute("SELECT body FROM messages ORDER BY id")]
    assert len(bodies) >= 20
    for seq, body in enumerate(bodies):
        assert body == f"killed:{seq}:" + "x" * 50_000  # whole, in order, none half-written
    sent = conn.execute("SELECT count(*) FROM events WHERE kind='message.sent'").fetchone()[0]
    assert sent == len(bodies)
    conn.close()
    # and the room goes on working
    reopened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    reopened.send("r0", "r1", "after the crash")
    assert reopened.inbox("r1", peek=True)[-1]["body"] == "after the crash"
    reopened.close()
