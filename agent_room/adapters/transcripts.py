"""Reading Claude Code transcript files: the tail of a big file, from its end backwards.

Transcripts grow to tens of megabytes over a long session, and ``peek`` wants its last
few turns: blocks are read backwards from the end until enough turns begin in what was
read (or a byte cap is hit), and each line is parsed once. The parsing itself is
``core.transcript``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from agent_room.core.transcript import Entry, EntryKind, Turn, group_turns, parse_line
from agent_room.turn.core.files import open_regular

BLOCK = 64 * 1024
"""The first block read from the end; each further block is twice as large."""
READ_CAP = 32 * 1024 * 1024
"""Bytes read at most: a single turn longer than this is shown from where reading stopped."""


@dataclass(frozen=True, slots=True)
class Tail:
    """The last turns of a transcript, and how much of the file it took to find them."""

    turns: list[Turn]
    size: int
    """The file's size when read."""
    read: int
    """Bytes read (from the end)."""

    @property
    def whole_file(self) -> bool:
        """Everything was read: the first turn is the transcript's first."""
        return self.read >= self.size


def read_tail(path: str, count: int, *, block: int = BLOCK, cap: int = READ_CAP) -> Tail:
    """The last ``count`` turns of the transcript at ``path``, oldest first.

    Raises ``OSError`` when the file cannot be read, or is no regular file (a FIFO in
    its place would hang the reader): the caller words it.
    """
    entries: list[Entry] = []
    prompts = 0
    head = b""
    fd, _ = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        size = handle.seek(0, 2)
        pos = size
        while pos > 0 and prompts < count and size - pos < cap:
            start = max(0, pos - block, size - cap)
            handle.seek(start)
            data = handle.read(pos - start) + head
            pos = start
            lines = data.split(b"\n")
            head = lines.pop(0) if pos > 0 else b""  # maybe cut: completed by the next block
            found = [entry for line in lines if line for entry in parse_line(line)]
            prompts += sum(1 for e in found if e.kind is EntryKind.PROMPT)
            entries[:0] = found
            block *= 2
    turns = group_turns(entries)
    return Tail(turns[-count:] if count > 0 else [], size, size - pos)


TAIL = 64 * 1024
"""Bytes read from either end of a transcript: its last (or first) records."""


def read_lines(
    path: str, limit: int = TAIL, *, from_start: bool = False
) -> tuple[list[bytes], float] | None:
    """The last whole lines of a file (its first ones ``from_start``) and its modification
    time; None if it is not a regular file of this user's (or cannot be read). Opened
    without following a link or blocking on a FIFO: the path comes from a hook."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        start = 0 if from_start else max(0, info.st_size - limit)
        data = os.pread(fd, min(limit, info.st_size - start), start)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # cut by the limit
    elif from_start and len(data) == limit:
        lines = lines[:-1]
    return [line for line in lines if line.strip()], info.st_mtime
