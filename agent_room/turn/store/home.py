"""The room directory: where it is, and the checks that keep it private.

The room is private to its user: the directory is 0700 and files are 0600, created
without following symlinks. A directory that others could write to, or that belongs to
someone else, is refused rather than repaired.
"""

from __future__ import annotations

import errno
import os
import stat
import time

from agent_room.turn.core.errors import RoomGone, UnsafeRoom

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    StrPath = str | os.PathLike[str]

DB_NAME = "room.db"
MARKER = "room.initialised"
"""Made beside the database once it first has a schema: from then on an empty or missing
database is a loss to report, not a room to make anew."""
ERROR_LOG = "errors.log"
ERROR_LOG_LIMIT = 1 << 20
"""Bytes past which the error log starts again (the problems of now matter)."""


def room_home(environ: Mapping[str, str]) -> str:
    """``$AGENT_ROOM_HOME`` if set, else ``~/.agent-room``.

    A relative ``$AGENT_ROOM_HOME`` is refused: every agent, hook and worker resolves it
    against its own working directory, so each would quietly use a room of its own."""
    configured = environ.get("AGENT_ROOM_HOME", "").strip()
    if configured:
        path = os.path.expanduser(configured)
        if not os.path.isabs(path):
            raise UnsafeRoom(
                f"AGENT_ROOM_HOME={configured} is a relative path; give an absolute one"
                f" (e.g. {os.path.abspath(path)})"
            )
        return path
    return os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".agent-room")


def _check_dir(path: str, st: os.stat_result) -> None:
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeRoom(f"room {path} is not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafeRoom(f"room {path} is owned by uid {st.st_uid}, not by you; refusing it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        mode = stat.S_IMODE(st.st_mode)
        raise UnsafeRoom(
            f"room {path} is writable by others (mode {mode:o}); fix it with: chmod 700 {path}"
        )


def ensure_room_dir(where: StrPath, *, create: bool = True) -> str:
    """Create the room directory (0700) or check an existing one; return it resolved.
    Without ``create``, a directory that is not there is ``RoomGone``."""
    path = os.fspath(where)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not create:
            raise RoomGone(f"the room {path} is gone") from None
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # another process created it first: check it like any existing one
        except OSError as exc:
            raise UnsafeRoom(f"cannot create room {path}: {exc.strerror}") from None
        st = os.stat(path)
    except OSError as exc:
        raise UnsafeRoom(f"cannot use room {path}: {exc.strerror}") from None
    _check_dir(path, st)
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, 0o700)  # ours and not writable by others: only tighten reading
    return os.path.realpath(path)


def open_private(path: StrPath, flags: int = os.O_RDWR) -> int:
    """Open (creating 0600) a file in the room without following a symlink; return the fd.

    An existing file must be a regular file owned by the user and not readable or
    writable by others.
    """
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeRoom(f"{path} is a symlink; refusing to follow it") from None
        raise UnsafeRoom(f"cannot open {path}: {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        raise UnsafeRoom(f"{path} is not a regular file of yours; refusing it")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.close(fd)
        raise UnsafeRoom(f"{path} is open to others (mode {stat.S_IMODE(st.st_mode):o})")
    return fd


def ensure_private_file(path: StrPath) -> None:
    """Create ``path`` 0600 if missing, refuse a symlink or a file open to others.

    Never opens an existing file: closing any descriptor of a database file releases every
    POSIX lock this process holds on it, including those of SQLite's own connections.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UnsafeRoom(f"cannot create {os.fspath(path)}: {exc.strerror}") from None
    else:
        os.close(fd)  # a brand-new file: no connection of ours can have it open yet
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeRoom(f"{os.fspath(path)} is a symlink; refusing to follow it")
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        raise UnsafeRoom(f"{os.fspath(path)} is not a regular file of yours; refusing it")
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise UnsafeRoom(f"{os.fspath(path)} is open to others (mode {stat.S_IMODE(st.st_mode):o})")


def inside_room(room: StrPath, candidate: StrPath) -> Path:
    """Resolve ``candidate`` and make sure it stays inside ``room``; return it."""
    from pathlib import Path

    resolved = (Path(room) / candidate).resolve()
    if not resolved.is_relative_to(Path(room).resolve()):
        raise UnsafeRoom(f"{candidate} leads outside the room")
    return resolved


def append_error_log(home: str, source: str, problem: str) -> None:
    """Append one record to the room's error log; silently give up if even that fails.

    The log is where what must not reach an agent's terminal goes: a hook's problems,
    the client library's notices. Everything logged is escaped to one printable line (a
    name with a newline or ESC would otherwise fake a record or steer the terminal of
    whoever reads the log), and a log file with a second hard link is never written: it
    would write through to (and truncate) whatever file it was linked to.
    """
    from agent_room.turn.core.printable import printable  # (a process that went well logs nothing)

    line = printable(problem.strip())[:500]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    record = f"{stamp} {printable(source)[:120] or '-'}: {line}\n".encode()
    try:
        room = ensure_room_dir(home)
        fd = open_private(os.path.join(room, ERROR_LOG), os.O_WRONLY | os.O_APPEND)
        try:
            st = os.fstat(fd)
            if st.st_nlink != 1:
                return
            if st.st_size > ERROR_LOG_LIMIT:
                os.ftruncate(fd, 0)
            os.write(fd, record)
        finally:
            os.close(fd)
    except (OSError, UnsafeRoom):
        pass
