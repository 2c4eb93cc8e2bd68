"""The listening end of ``store.wake``: pokes from processes that just queued work."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from agent_room.store.wake import wake_path


class WakeListener:
    """Holds ``wake.fifo`` open while its deliverer holds the lease.

    The FIFO is opened for reading and writing: a reader alone would see end-of-file,
    and be woken for ever, each time a sender closes its end.
    """

    def __init__(self, home: str) -> None:
        self.path = Path(wake_path(home))
        self.fd: int | None = None

    def fileno(self) -> int:
        """For ``select``; -1 while closed."""
        return -1 if self.fd is None else self.fd

    def bind(self) -> None:
        """Listen, making the private FIFO if needed; quietly do without direct wake-ups
        if that fails (file events still arrive)."""
        if self.fd is not None:
            return
        try:
            try:
                mode = self.path.lstat().st_mode
            except FileNotFoundError:
                os.mkfifo(self.path, 0o600)
            else:
                if not stat.S_ISFIFO(mode):  # something else in its place: replace it
                    self.path.unlink()
                    os.mkfifo(self.path, 0o600)
            self.fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            self.fd = None

    def drain(self) -> int:
        """Read every poke waiting; how many bytes there were."""
        count = 0
        while self.fd is not None:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # nothing left (EAGAIN)
                break
            count += len(chunk)
            if not chunk:
                break
        return count

    def close(self) -> None:
        """Stop listening; the FIFO stays for the next deliverer."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
