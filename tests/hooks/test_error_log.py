"""The room's error log cannot be forged or turned against another file.

Real hook processes write it; a hostile event name or payload must still give exactly
one record on one line with nothing a terminal acts on, and a log that is hard-linked
elsewhere is never written through. The hook exits 0 all the same.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.hooks.conftest import Hook, new_session, room_rows

ACTED_ON = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xaa-\xae]")
"""Control bytes (but the newline ending a record), UTF-8 C1 and bidi controls."""
FORGED = "\n2026-01-01T00:00:00 hook Stop: all is well"


def _records(room_home: Path) -> list[bytes]:
    raw = (room_home / "errors.log").read_bytes()
    assert raw.endswith(b"\n")
    return raw.splitlines()


def test_a_hostile_event_name_gives_one_escaped_record(hook: Hook, seeded: Path) -> None:
    before = room_rows(seeded)
    event = "Stop\x1b]2;pwned\x07\x1b[2J\r" + FORGED
    code, out, err = hook(event, new_session("Stop"))
    assert (code, out, err) == (0, None, "")
    assert room_rows(seeded) == before
    (record,) = _records(seeded)
    assert not ACTED_ON.search(record)
    assert b"hook Stop\\x1b]2;pwned\\x07\\x1b[2J\\r\\n2026-01-01" in record


def test_hostile_payload_text_is_escaped_too(hook: Hook, seeded: Path) -> None:
    before = room_rows(seeded)
    payload = new_session("Stop")
    payload["hook_event_name"] = "Stop\u202e\x9b2J\t" + FORGED
    code, out, err = hook("Stop", json.dumps(payload).encode())
    assert (code, out, err) == (0, None, "")
    assert room_rows(seeded) == before
    (record,) = _records(seeded)
    assert not ACTED_ON.search(record)
    assert b"payload is for Stop\\u202e\\x9b2J\\t\\n2026-01-01" in record


def test_an_undecodable_event_name_is_logged_not_raised(
    seeded: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    """argv that is not UTF-8 arrives as lone surrogates: still one line, still exit 0."""
    room_home = seeded
    before = room_rows(room_home)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(room_home.parent),
        "AGENT_ROOM_HOME": str(room_home),
        "CLAUDE_PID": str(agent_proc.pid),
        "LC_ALL": "C.UTF-8",
    }
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"agent_room", b"hook", b"Stop\xff\x1b"],
        input=json.dumps(new_session("Stop")).encode(),
        capture_output=True,
        env=env,
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert room_rows(room_home) == before
    (record,) = _records(room_home)
    assert b"hook Stop\\udcff\\x1b:" in record


def test_a_hard_linked_log_is_never_written_through(
    hook: Hook, seeded: Path, tmp_path: Path
) -> None:
    room_home = seeded
    rows = room_rows(room_home)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious\n" * 200_000)  # over the log's size limit: no truncating
    victim.chmod(0o600)
    before = victim.read_bytes()
    os.link(victim, room_home / "errors.log")
    code, out, err = hook("Stop", b"{not json")
    assert (code, out, err) == (0, None, "")
    assert victim.read_bytes() == before
    assert victim.stat().st_nlink == 2
    assert room_rows(room_home) == rows


def test_a_plain_log_still_takes_records(hook: Hook, room_home: Path) -> None:
    """The guard refuses only a linked file: an ordinary log keeps growing by one line."""
    hook("Stop", b"{not json")
    hook("Stop", b"")
    first, second = _records(room_home)
    assert b"invalid JSON" in first
    assert b"empty stdin" in second
