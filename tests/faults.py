"""Real faults for a room's database: a full file system, a held write lock, bad pages.

Each is made the way it happens to a user: the room on a small tmpfs filled to the
last byte, another process holding ``BEGIN IMMEDIATE``, pages overwritten on disk.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import require_tool

HOLD_SCRIPT = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


class TinyDisk:
    """A small tmpfs mounted for one test; ``fill`` takes its last byte, ``free`` gives
    the space back."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.ballast = where / "ballast"

    def fill(self) -> None:
        """Write until the file system is full (ENOSPC)."""
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            chunk = b"\0" * 65536
            while chunk:
                try:
                    os.write(fd, chunk)
                except OSError:  # ENOSPC: smaller pieces until not one byte fits
                    chunk = chunk[: len(chunk) // 2]
        finally:
            os.close(fd)

    def free(self) -> None:
        """Remove the ballast: the file system has room again."""
        self.ballast.unlink(missing_ok=True)


@contextlib.contextmanager
def tiny_disk(tmp_path: Path, size: str = "4m") -> Iterator[TinyDisk]:
    """A tmpfs of ``size`` at ``tmp_path/disk`` (needs the right to mount: root here)."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    require_tool(mounted.returncode == 0, "mounting a small tmpfs (root)")
    try:
        yield TinyDisk(where)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@contextlib.contextmanager
def write_lock_held(db: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another process holds the room's write lock for ``seconds`` (then lets go)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(db), str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    try:
        yield proc
    finally:
        proc.wait(timeout=seconds + 30)


def checkpoint(db: Path) -> None:
    """Move everything from the write-ahead log into the database file itself."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def corrupt_data_pages(db: Path) -> None:
    """Overwrite the first page of every table and index: the schema stays readable (a
    room still opens), its rows do not."""
    checkpoint(db)
    conn = sqlite3.connect(db)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [r for (r,) in conn.execute("SELECT rootpage FROM sqlite_master WHERE rootpage > 1")]
    conn.close()
    with open(db, "r+b") as out:
        for page in roots:
            out.seek((page - 1) * size)
            out.write(bytes([0xA5]) * size)
