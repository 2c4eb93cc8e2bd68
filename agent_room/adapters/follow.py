"""Reading a transcript forwards from a byte offset: what was appended since last time.

The memory worker follows every live session's transcript as it grows, so each byte is
read and parsed once. Only whole lines are taken (the client may be writing the last
one); a transcript that shrank or was replaced is read again from its start; of a huge
backlog only the newest ``BACKLOG`` bytes are read, and the first, cut line is simply
not JSON (the parser drops it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from agent_room.turn.core.files import open_regular

CHUNK = 8 * 1024 * 1024
"""Bytes read at most in one call."""
BACKLOG = 32 * 1024 * 1024
"""Unread bytes beyond this are skipped: the oldest part of a huge transcript."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """Whole lines read from a transcript, and where the next read starts."""

    lines: list[bytes]
    end: int
    """The offset after the last whole line read."""
    size: int
    inode: int
    restarted: bool = False
    """The file shrank or was replaced: reading began again at its start."""
    skipped: int = 0
    """Bytes of backlog (or of one overlong line) left unread."""

    @property
    def foreign(self) -> bool:
        """No line looks like a JSON object: not a Claude Code transcript."""
        return bool(self.lines) and not any(line.lstrip().startswith(b"{") for line in self.lines)


def read_from(
    path: str,
    offset: int,
    inode: int | None,
    *,
    chunk: int | None = None,
    backlog: int | None = None,
) -> Chunk:
    """The whole lines of ``path`` from ``offset`` (at most ``chunk`` bytes of them).

    Raises ``OSError`` when the file cannot be read, or is no regular file (a FIFO in
    its place would hang the worker): the caller words it.
    """
    chunk = CHUNK if chunk is None else chunk
    backlog = BACKLOG if backlog is None else backlog
    fd, _ = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        size = info.st_size
        restarted = (inode is not None and info.st_ino != inode) or size < offset
        if restarted:
            offset = 0
        skipped = 0
        if size - offset > backlog:
            skipped = size - backlog - offset
            offset = size - backlog
        handle.seek(offset)
        data = handle.read(min(chunk, size - offset))
    last = data.rfind(b"\n")
    if last < 0:
        if len(data) == chunk:  # one line longer than a chunk: pass over it
            return Chunk([], offset + len(data), size, info.st_ino, restarted, skipped + len(data))
        return Chunk([], offset, size, info.st_ino, restarted, skipped)
    lines = [line for line in data[:last].split(b"\n") if line.strip()]
    return Chunk(lines, offset + last + 1, size, info.st_ino, restarted, skipped)


def unreadable(path: str, strerror: str | None) -> str:
    """The problem a reader keeps on its cursor when ``path`` cannot be read."""
    return f"cannot read {path}: {strerror}"


def settled(path: str, offset: int, inode: int | None, problem: object) -> bool:
    """Whether a reader whose cursor stands at ``offset`` of ``inode``, having told
    ``problem``, has nothing to do at ``path``: the file is still the one read up to
    there, and no longer, or it still cannot be seen and that is what was told. One
    ``stat`` and no open (a session whose transcript is not written yet, or is gone,
    costs its reader no more than one that rests)."""
    try:
        info = os.stat(path)  # noqa: PTH116 - a plain stat, as the reads here are plain
    except OSError as exc:
        return problem == unreadable(path, exc.strerror)
    return info.st_size == offset and (inode is None or info.st_ino == inode)


def unread_bytes(path: str, offset: int) -> int:
    """How much of the file at ``path`` lies past ``offset`` (0 when it cannot be seen)."""
    try:
        size = os.stat(path).st_size  # noqa: PTH116 - a plain stat, as the reads here are plain
    except OSError:
        return 0
    return max(0, size - offset)
