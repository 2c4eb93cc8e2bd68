"""The room as a peer of Claude Code's sessions: a messaging socket of its own.

``PeerSocket`` makes the room a peer the clients answer: a socket of its own, listed in
their registry with a key file, as a client does, so that their receipts (held,
delivered, denied ...) and idle notices come back to it; it sends one frame per
connection, as the clients do. What comes back is believed only from a process of the
room's user (``SO_PEERCRED``) that opens with the room's token and is the live client
whose socket the receipt names. Linux only (the clients' messaging needs it too).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
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
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from agent_room.adapters.claude_files import read_json
from agent_room.adapters.claude_native import FileRegistry
from agent_room.core.native import (
    PROTOCOL,
    ROOM_PEER_MARK,
    ROOM_PEER_NAME,
    Receipt,
    parse_receipt,
)
from agent_room.turn import procfs

SEND_TIMEOUT = 2.0
"""Seconds to connect and write one frame; a client that takes longer is treated as gone."""
LINE_LIMIT = 64 * 1024
"""The longest line read from a client (receipts are a few hundred bytes)."""
READ_TIMEOUT = 5.0


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
        self._token = ""
        """The peer token the room publishes in its key file: every connection to the
        room's socket begins with it (the clients send it, as to any peer)."""

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
        self._token = secrets.token_hex(16)
        key = {"peerToken": self._token, "procStart": start, "pidDomain": domain}
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
            data = read_json(path)
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
        """One connection: the peer's credentials (``SO_PEERCRED``: the room's user), the
        room's token on the first line, then receipts, each about the connecting
        process's own socket."""
        with conn:
            cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, _gid = struct.unpack("3i", cred)
            if uid != os.getuid():
                self._found.put(f"a connection from user {uid} refused")
                return
            entry = self.registry.entry(pid)  # now, while the client is surely connected
            own = entry.socket if entry is not None else None
            conn.settimeout(READ_TIMEOUT)
            authed: list[bool] = []  # empty until the first line said whether it is
            for line in _lines(conn):
                if not self._take(line, pid, own, authed):
                    break
        if self.on_receipt is not None:
            self.on_receipt()

    def _take(self, line: bytes, pid: int, own: str | None, authed: list[bool]) -> bool:
        """Take one line from the client ``pid`` (whose registry entry names ``own`` as
        its socket); whether to read on (False: the connection is refused)."""
        found = parse_receipt(line)
        if not authed:
            authed.append(found == "auth" and self._auth_token(line))
            if not authed[0]:
                self._found.put(f"a connection from pid {pid} without the room's token refused")
            return authed[0]
        if found == "auth":
            return True
        if isinstance(found, Receipt) and (not own or found.sender_socket != own):
            found = f"a receipt from pid {pid} about a socket not its own refused"
        self._found.put(found)
        return True

    def _auth_token(self, line: bytes) -> bool:
        data = json.loads(line)
        token = data.get("token") if isinstance(data, dict) else None
        return (
            bool(self._token)
            and isinstance(token, str)
            and hmac.compare_digest(token.encode(), self._token.encode())
        )


def _lines(conn: socket.socket) -> Iterator[bytes]:
    """The non-blank lines of one connection, up to ``LINE_LIMIT`` bytes pending."""
    buffer = b""
    while len(buffer) <= LINE_LIMIT:
        try:
            chunk = conn.recv(65536)
        except OSError:
            return
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line
    if buffer.strip() and len(buffer) <= LINE_LIMIT:
        yield buffer
