"""A direct wake-up for the active deliverer: a FIFO in the room directory.

File events reach the deliverer through the room watch within tens of milliseconds; a
message an agent has just sent should not wait even that. After a commit that queues something
to deliver, the store pokes ``wake.fifo``; the deliverer holding the lease keeps it open
for reading. A poke carries nothing and may be lost (nobody listening, a full pipe): the
file events and the safety re-read still wake the deliverer, only a little later. The
listening end is ``workers.wakeup.WakeListener``.

A FIFO needs nothing beyond ``os``, which every process has loaded already: the poke
costs the sender two system calls and no imports.
"""

from __future__ import annotations

import os

WAKE_NAME = "wake.fifo"
_FIFO = 0o010000
_FORMAT = 0o170000


def wake_path(home: str) -> str:
    """Where the active deliverer listens."""
    return os.path.join(home, WAKE_NAME)


def not_a_poke(_change: object, path: str) -> bool:
    """A watchfiles filter: a poke's own file event says nothing the FIFO did not."""
    return not path.endswith(WAKE_NAME)


def poke(home: str) -> None:
    """Tell the active deliverer to look now; never fails, never blocks."""
    try:
        fd = os.open(wake_path(home), os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return  # no FIFO, or nobody reading it (ENXIO): the file events will do
    try:
        if os.fstat(fd).st_mode & _FORMAT == _FIFO:
            os.write(fd, b"!")
    except OSError:
        pass  # the pipe is full: the deliverer has pokes enough to read
    finally:
        os.close(fd)


def listening(home: str) -> bool:
    """Whether a deliverer is listening (holds the lease and is alive) right now: the
    FIFO opens for writing only while someone reads it (a plain file put in its place
    opens too, and says nothing)."""
    try:
        fd = os.open(wake_path(home), os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        return os.fstat(fd).st_mode & _FORMAT == _FIFO
    finally:
        os.close(fd)
