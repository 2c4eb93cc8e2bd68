"""Claude Code's own session registry (2.1.224 and later), on disk.

``FileRegistry`` reads ``~/.claude/sessions/<pid>.json`` (``$CLAUDE_CONFIG_DIR`` if set)
with the room's own liveness check (the client leaves its file behind when killed), and
believes an entry only for a process of the room's own user. The room's own peer socket
is ``adapters.claude_peer``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agent_room.adapters.claude_files import read_json
from agent_room.core.native import NativeSession, SocketFacts, parse_entry
from agent_room.turn import procfs
from agent_room.turn.core.ports import ProcessProbe


def claude_dir(environ: Mapping[str, str]) -> Path:
    """Where the client keeps its state: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    given = environ.get("CLAUDE_CONFIG_DIR")
    if given:
        return Path(given)
    return Path(environ.get("HOME") or Path.home()) / ".claude"


class FileRegistry:
    """The live sessions in a client's registry folder (``NativeRegistry``)."""

    def __init__(
        self,
        root: Path,
        probe: ProcessProbe,
        *,
        owner: Callable[[int], int | None] = procfs.real_uid,
        uid: int | None = None,
    ) -> None:
        self.root = root
        self.sessions_dir = root / "sessions"
        self.probe = probe
        self.owner = owner
        """The real uid a pid runs as (None: gone): entries of other users' processes
        are not believed."""
        self.uid = os.getuid() if uid is None else uid

    def sessions(self) -> list[NativeSession]:
        """Every live session the client lists, the room's own peers left out."""
        try:
            names = sorted(p.name for p in self.sessions_dir.iterdir())
        except OSError:
            return []
        found = []
        for name in names:
            pid = name[:-5]
            if not name.endswith(".json") or not pid.isdigit():
                continue
            entry = self.entry(int(pid))
            if entry is not None and not entry.room_peer:
                found.append(entry)
        return found

    def entry(self, pid: int) -> NativeSession | None:
        """The live session of process ``pid``; None if absent, malformed or stale (the
        process gone, or its pid reused by another), or if the process is not the room's
        user's (a planted entry naming someone else's process)."""
        data = read_json(self.sessions_dir / f"{pid}.json")
        session = parse_entry(data)
        if session is None or session.pid != pid:
            return None
        if not self.probe.is_alive(pid, session.proc_start) or self.owner(pid) != self.uid:
            return None
        if session.job and session.job_state is None:
            state = read_json(self.root / "jobs" / session.job / "state.json")
            if isinstance(state, dict) and isinstance(state.get("state"), str):
                session = parse_entry({**_as_dict(data), "state": state["state"]}) or session
        return session

    def socket_facts(self, path: str) -> SocketFacts | None:
        """``lstat`` of a socket and its folder; None if either is missing."""
        try:
            sock = Path(path).lstat()
            folder = Path(path).parent.lstat()
        except OSError:
            return None
        return SocketFacts(
            is_socket=stat.S_ISSOCK(sock.st_mode),
            uid=sock.st_uid,
            mode=stat.S_IMODE(sock.st_mode),
            dir_uid=folder.st_uid,
            dir_mode=stat.S_IMODE(folder.st_mode),
        )

    def peer_token(self, pid: int, path: str) -> str | None:
        """The token a client publishes for peers writing to its socket (``.key`` file)."""
        digest = hashlib.sha256(path.encode()).hexdigest()
        data = read_json(self.sessions_dir / f"{pid}.{digest}.key")
        token = data.get("peerToken") if isinstance(data, dict) else None
        return token if isinstance(token, str) and token.isalnum() else None


def _as_dict(data: object) -> dict[str, Any]:
    return dict(data) if isinstance(data, dict) else {}
