"""Reading a file another process could have replaced: never blocking, never unbounded.

A transcript path comes from an agent's own hook payload; ``room.conf``, ``watch.pid``,
a client's registry entry and a state file to import sit where another process of the
user could swap them. Opened plainly, a FIFO in their place hangs the reader (a hook,
``peek``, the watch's memory worker) until someone writes to it, and ``/dev/zero`` is
read until memory runs out. So every such read goes through here: opened with
``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a writer), without following
a symlink where the room made the file itself, checked to be a regular file after the
open (``fstat``: no race with a swap between a check and the open), and read up to a
bound. Failures are ``OSError``s with a reason in ``strerror``, as the callers already
word theirs.

It lives in ``core`` because both sides of the store/adapters layer need it (and the
hooks, which must stay on the standard library): ``os`` and ``stat`` only.
"""

from __future__ import annotations

import errno
import os
import stat

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


SETTINGS_LIMIT = 1 << 20
"""A settings, theme or state file larger than this is not one the user wrote."""


class NotRegular(OSError):
    """The path names something other than a regular file (a FIFO, a device ...)."""


class TooLarge(OSError):
    """The file is larger than its reader's bound."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> tuple[int, int]:
    """Open ``path`` for reading without blocking; return ``(fd, size)``.

    ``follow=False`` refuses a symlink (``ELOOP``): for the room's own files. Raises
    ``NotRegular`` for anything but a regular file, ``OSError`` when it cannot be opened.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, f"{kind_of(info.st_mode)}, not a regular file")
    return fd, info.st_size


def read_fd(fd: int, limit: int) -> bytes:
    """Everything left in ``fd``, or ``TooLarge`` once past ``limit`` bytes."""
    parts: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise TooLarge(errno.EFBIG, f"larger than {limit} bytes")


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = True) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes (see ``open_regular``)."""
    fd, size = open_regular(path, follow=follow)
    try:
        if size > limit:
            raise TooLarge(errno.EFBIG, f"larger than {limit} bytes")
        return read_fd(fd, limit)  # it may have grown since fstat
    finally:
        os.close(fd)
