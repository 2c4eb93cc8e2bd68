"""``DirectoryEvents``: Linux's file events of one directory, waited for without polling.

watchfiles' watcher wakes every ``step`` milliseconds to look for the end of a burst,
whether anything changed or not: at rest that was most of what a watcher cost (some
fifty wake-ups a second). Here the watching thread sleeps in ``select`` until the kernel
has events, and otherwise only wakes to look at its stop now and then. Linux only:
``available`` says whether it can be used (elsewhere the room falls back to watchfiles).
"""

from __future__ import annotations

import ctypes
import os
import select
import struct
import sys
import threading

IN_MODIFY = 0x002
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
WATCHED = (
    IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
)
"""A file written, made, removed or renamed (opening, reading and closing are not)."""
_NONBLOCK = os.O_NONBLOCK
_CLOEXEC = 0o2000000
_HEADER = struct.Struct("iIII")
"""``struct inotify_event``: wd, mask, cookie, len; then ``len`` bytes of name."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return libc if hasattr(libc, "inotify_init1") else None


def available() -> bool:
    """Whether this system has inotify."""
    return _libc() is not None


class DirectoryEvents:
    """The names changed in one directory (not below it), read as the kernel reports them."""

    def __init__(self, path: str) -> None:
        """Watch ``path``; OSError if it cannot be watched (gone, not a directory, no
        inotify here)."""
        libc = _libc()
        if libc is None:
            raise OSError("inotify is not available here")
        self.path = path
        self.fd = libc.inotify_init1(_NONBLOCK | _CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        if libc.inotify_add_watch(self.fd, os.fsencode(path), WATCHED) < 0:
            error = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(error, f"cannot watch {path}: {os.strerror(error)}")
        self._woken, self._wake = os.pipe()
        os.set_blocking(self._wake, False)
        self._lock = threading.Lock()
        self._closed = False

    def wait(self, timeout: float) -> bool:
        """Whether events arrived within ``timeout`` seconds (False at once on ``interrupt``)."""
        ready, _, _ = select.select([self.fd, self._woken], [], [], max(timeout, 0.0))
        if self._woken in ready:
            os.read(self._woken, 64)
            return False
        return bool(ready)

    def interrupt(self) -> None:
        """End a ``wait`` now (from another thread): the watcher is to look at its stop."""
        with self._lock:
            if not self._closed:
                try:  # noqa: SIM105 - full: it is woken already
                    os.write(self._wake, b"!")
                except BlockingIOError:
                    pass

    def read(self) -> set[str]:
        """The paths of every event waiting (the directory itself for its own events)."""
        paths: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return paths
            if not data:
                return paths
            offset = 0
            while offset + _HEADER.size <= len(data):
                _wd, _mask, _cookie, size = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size
                name = data[offset : offset + size].rstrip(b"\0")
                offset += size
                paths.add(f"{self.path}/{os.fsdecode(name)}" if name else self.path)

    def close(self) -> None:
        """Stop watching."""
        with self._lock:
            self._closed = True
            for fd in (self.fd, self._woken, self._wake):
                os.close(fd)
