"""``room.conf``: the room's own settings file, read the one way both sides need.

One ``key = value`` a line, ``#`` comments, mode 0600 (it may hold a password). The
settings model (``agent_room.config``) reads every key; the hooks, ``send`` and ``status``
ask only for ``database`` on every turn, so this reader stays on the standard library and
is written once for both. A line it cannot follow is refused with the file and the line:
passed over, a typo would leave one host on a SQLite room of its own. The line itself is
never shown (it may hold a password).
"""

from __future__ import annotations

import os
import stat

from agent_room.turn.core.errors import UnsafeRoom
from agent_room.turn.core.files import TooLarge, open_regular, read_fd

CONFIG_NAME = "room.conf"
"""The file's name in the room directory."""
CONFIG_LIMIT = 64 * 1024
"""``room.conf`` is read whole or refused: a dozen settings never need more than this."""
KEYS = ("database", "claude", "codex", "gemini", "tmux", "mcp", "watch", "watch_idle_exit")
"""The settings the file may hold (``config.RoomSettings`` has a field for each, and its
variable ``AGENT_ROOM_<KEY>`` beats the file)."""


def read_room_conf(home: str) -> dict[str, tuple[str, int]]:
    """Each setting of the room's ``room.conf`` with the line it is on (none: no file);
    read whole, never blocking (it may have been replaced by a FIFO), or refused."""
    path = os.path.join(home, CONFIG_NAME)
    try:
        fd, _size = open_regular(path, follow=False)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UnsafeRoom(f"cannot read {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise UnsafeRoom(f"{path} may hold a password and is open to others: chmod 600 {path}")
        raw = read_fd(fd, CONFIG_LIMIT)
    except TooLarge:
        raise UnsafeRoom(f"{path} is larger than {CONFIG_LIMIT // 1024} KiB") from None
    except OSError as exc:
        raise UnsafeRoom(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        number = raw[: exc.start].count(b"\n") + 1
        raise UnsafeRoom(f"{path} line {number}: not UTF-8 text") from None
    found: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = (part.strip() for part in line.partition("="))
        if not sep:
            raise UnsafeRoom(f"{path} line {number}: not `key = value` ({_KNOWN})")
        if key not in KEYS:
            named = f" {key}" if key.isidentifier() else ""
            raise UnsafeRoom(f"{path} line {number}: unknown setting{named} ({_KNOWN})")
        found.setdefault(key, (value.strip("'\""), number))
    return found


_KNOWN = "settings: " + ", ".join(KEYS)
