"""``DirectoryEvents``: Linux's file events of one directory, waited for without polling.

watchfiles' watcher wakes every ``step`` milliseconds to look for the end of a burst,
whether anything changed or not: at rest that was most of what a watcher cost (some
fifty wake-ups a second). Here the watching thread sleeps in ``select`` until the kernel
has events (inotify, through inotify_simple), and otherwise only wakes to look at its
stop now and then. Linux only: ``available`` says whether it can be used (elsewhere the
room falls back to watchfiles).
"""

from __future__ import annotations

import os
import select
import sys
import threading

try:  # a Linux-only dependency: elsewhere the room falls back to watchfiles
    from inotify_simple import INotify
except ImportError:
    INotify = None

WATCHED = 0x002 | 0x040 | 0x080 | 0x100 | 0x200 | 0x400 | 0x800
"""A file written, made, removed or renamed (opening, reading and closing are not):
IN_MODIFY, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF."""


def available() -> bool:
    """Whether this system has inotify (and inotify_simple is installed)."""
    return sys.platform.startswith("linux") and INotify is not None


class DirectoryEvents:
    """The names changed in one directory (not below it), read as the kernel reports them."""

    def __init__(self, path: str) -> None:
        """Watch ``path``; OSError if it cannot be watched (gone, not a directory, no
        inotify here)."""
        if not available():
            raise OSError("inotify is not available here")
        self.path = path
        self.notify: INotify = INotify(nonblocking=True)
        try:
            self.notify.add_watch(path, WATCHED)
        except OSError as exc:
            self.notify.close()
            raise OSError(exc.errno, f"cannot watch {path}: {exc.strerror}") from None
        self._woken, self._wake = os.pipe()
        os.set_blocking(self._wake, False)
        self._lock = threading.Lock()
        self._closed = False

    def wait(self, timeout: float) -> bool:
        """Whether events arrived within ``timeout`` seconds (False at once on ``interrupt``)."""
        ready, _, _ = select.select([self.notify.fileno(), self._woken], [], [], max(timeout, 0))
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
        while events := self.notify.read(timeout=0):
            paths.update(f"{self.path}/{e.name}" if e.name else self.path for e in events)
        return paths

    def close(self) -> None:
        """Stop watching."""
        with self._lock:
            self._closed = True
            self.notify.close()
            for fd in (self._woken, self._wake):
                os.close(fd)
