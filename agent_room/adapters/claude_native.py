"""Claude Code's own session registry and messaging socket (2.1.224 and later), on disk.

``FileRegistry`` reads ``~/.claude/sessions/<pid>.json`` (``$CLAUDE_CONFIG_DIR`` if set)
with the room's own liveness check: the client leaves its file behind when killed.
``PeerSocket`` makes the room a peer the clients answer: a socket of its own, listed in
their registry with a key file, as a client does, so that their receipts (held,
delivered, denied ...) and idle notices come back to it; it sends one frame per
connection, as the clients do. Linux only (the clients' messaging needs it too).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import secrets
import socket
import stat
import struct
import tempfile
import threading
import time
import uuid
from pathlib import Path

from agent_room.adapters import procfs
from agent_room.adapters.claude_files import read_json as _read_json
from agent_room.core.native import (
    PROTOCOL,
    ROOM_PEER_MARK,
    ROOM_PEER_NAME,
    NativeSession,
    Receipt,
    SocketFacts,
    parse_entry,
    parse_receipt,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from agent_room.core.ports import ProcessProbe

SEND_TIMEOUT = 2.0
"""Seconds to connect and write one frame; a client that takes longer is treated as gone."""
LINE_LIMIT = 64 * 1024
"""The longest line read from a client (receipts are a few hundred bytes)."""
READ_TIMEOUT = 5.0


def claude_dir(environ: Mapping[str, str]) -> Path:
    """Where the client keeps its state: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    given = environ.get("CLAUDE_CONFIG_DIR")
    if given:
        return Path(given)
    return Path(environ.get("HOME") or Path.home()) / ".claude"


class FileRegistry:
    """The live sessions in a client's registry folder (``NativeRegistry``)."""

    def __init__(self, root: Path, probe: ProcessProbe) -> None:
        self.root = root
        self.sessions_dir = root / "sessions"
        self.probe = probe

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
        process gone, or its pid reused by another)."""
        data = _read_json(self.sessions_dir / f"{pid}.json")
        session = parse_entry(data)
        if session is None or session.pid != pid:
            return None
        if not self.probe.is_alive(pid, session.proc_start):
            return None
        if session.job and session.job_state is None:
            state = _read_json(self.root / "jobs" / session.job / "state.json")
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
        data = _read_json(self.sessions_dir / f"{pid}.{digest}.key")
        token = data.get("peerToken") if isinstance(data, dict) else None
        return token if isinstance(token, str) and token.isalnum() else None


def _as_dict(data: object) -> dict[str, Any]:
    return dict(data) if isinstance(data, dict) else {}


def socket_folder(environ: Mapping[str, str]) -> Path:
    """Where the clients keep their sockets: ``$XDG_RUNTIME_DIR`` or the temp folder,
    then ``cc-socks``."""
    return Path(environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()) / "cc-socks"


def _private_folder(path: Path) -> None:
    """Create ``path`` 0700, or check that it is a folder of this user's alone."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"{path} is not a folder of this user")
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise OSError(f"{path} is open to other users")


def pid_domain(pid: int) -> str:
    """The client's ``pidDomain``: the boot and the pid namespace a pid belongs to."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")
        namespace = str(Path(f"/proc/{pid}/ns/pid").readlink())
    except OSError:
        return "linux:unknown"
    return f"linux:{boot}:{namespace}"


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Write a small JSON file 0600 without following a planted link, atomically."""
    temp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, json.dumps(data).encode())
    finally:
        os.close(fd)
    temp.replace(path)


class PeerSocket:
    """The room as a peer of the clients (``NativeTransport``): a listening socket and an
    entry in their registry, made by ``open`` and removed by ``close``."""

    def __init__(
        self,
        registry: FileRegistry,
        *,
        folder: Path,
        cwd: str,
        on_receipt: Callable[[], None] | None = None,
    ) -> None:
        self.registry = registry
        self.folder = folder
        self.cwd = cwd
        self.on_receipt = on_receipt
        self.pid = os.getpid()
        self.socket: str | None = None
        self._files: list[Path] = []
        self._server: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._found: queue.SimpleQueue[Receipt | str] = queue.SimpleQueue()

    def open(self) -> None:
        """Listen and register, once; raises OSError (then nothing is left behind)."""
        if self.socket is not None:
            return
        self._stop.clear()
        try:
            self._open()
        except OSError:
            self.close()
            raise

    def _open(self) -> None:
        _private_folder(self.folder)
        path = self.folder / f"{self.pid}.sock"
        if len(bytes(path)) >= 100:
            raise OSError(f"the socket path {path} is too long")
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(path.lstat().st_mode):  # left by a dead process of this pid
                path.unlink()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server = server
        server.bind(str(path))
        self._files.append(path)
        path.chmod(0o600)
        server.listen(32)
        server.settimeout(0.2)
        self.socket = str(path)
        sessions = self.registry.sessions_dir
        sessions.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._sweep()
        stat_ = procfs.read_stat(self.pid)
        start = str(stat_.start_ticks) if stat_ else ""
        domain = pid_domain(self.pid)
        now = int(time.time() * 1000)
        entry = {
            "pid": self.pid,
            "sessionId": str(uuid.uuid4()),
            "cwd": self.cwd,
            "startedAt": now,
            "procStart": start,
            "version": "agent-room",
            "peerProtocol": PROTOCOL,
            "peerFeatures": ["notify_idle", "reply_across_default_dirs"],
            "kind": "interactive",
            "entrypoint": "cli",
            "pidDomain": domain,
            "messagingSocketPath": str(path),
            "name": ROOM_PEER_NAME,
            "nameSource": "user",
            "nameSince": now,
            "status": "idle",
            "updatedAt": now,
            "statusUpdatedAt": now,
            ROOM_PEER_MARK: True,
        }
        key = {"peerToken": secrets.token_hex(16), "procStart": start, "pidDomain": domain}
        digest = hashlib.sha256(bytes(path)).hexdigest()
        key_path = sessions / f"{self.pid}.{digest}.key"
        entry_path = sessions / f"{self.pid}.json"
        self._files += [key_path, entry_path]
        _write_private(key_path, key)
        _write_private(entry_path, entry)
        self._thread = threading.Thread(
            target=self._serve, name="agent-room-native-peer", daemon=True
        )
        self._thread.start()

    def _sweep(self) -> None:
        """Take out the entries (and sockets) of the room's peers that died without
        closing (killed): the clients would list them, the room never does."""
        for path in self.registry.sessions_dir.glob("*.json"):
            data = _read_json(path)
            pid = path.stem
            if not (isinstance(data, dict) and data.get(ROOM_PEER_MARK) and pid.isdigit()):
                continue
            start = data.get("procStart")
            ticks = int(start) if isinstance(start, str) and start.isdigit() else None
            if int(pid) == self.pid or self.registry.probe.is_alive(int(pid), ticks):
                continue
            socket_path = data.get("messagingSocketPath")
            if isinstance(socket_path, str) and Path(socket_path).parent == self.folder:
                with contextlib.suppress(OSError):
                    if stat.S_ISSOCK(Path(socket_path).lstat().st_mode):
                        Path(socket_path).unlink()
            for stale in [path, *self.registry.sessions_dir.glob(f"{pid}.*.key")]:
                with contextlib.suppress(OSError):
                    stale.unlink()

    def close(self) -> None:
        """Stop listening and take the room's entry out of the clients' registry."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._server is not None:
            self._server.close()
            self._server = None
        for path in reversed(self._files):
            with contextlib.suppress(OSError):
                path.unlink()
        self._files.clear()
        self.socket = None

    def send(self, path: str, frame: dict[str, Any], *, token: str | None) -> None:
        """Write one frame to a client's socket (with its peer token when it has one);
        raises OSError when the socket refuses, is gone, or stalls."""
        lines = []
        if token:
            lines.append(json.dumps({"type": "auth", "token": token}))
        lines.append(json.dumps(frame))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(SEND_TIMEOUT)
            conn.connect(path)
            conn.sendall(("\n".join(lines) + "\n").encode())
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_WR)

    def receipts(self) -> list[Receipt | str]:
        """Receipts arrived since the last call, and why other lines were ignored."""
        found: list[Receipt | str] = []
        while True:
            try:
                found.append(self._found.get_nowait())
            except queue.Empty:
                return found

    def _serve(self) -> None:
        server = self._server
        while server is not None and not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.1)
                continue
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        with conn:
            cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", cred)
            if uid != os.getuid():
                self._found.put(f"a connection from user {uid} refused")
                return
            conn.settimeout(READ_TIMEOUT)
            buffer = b""
            while len(buffer) <= LINE_LIMIT:
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    self._take(line)
            if buffer.strip() and len(buffer) <= LINE_LIMIT:
                self._take(buffer)
        if self.on_receipt is not None:
            self.on_receipt()

    def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        found = parse_receipt(line)
        if found != "auth":
            self._found.put(found)
