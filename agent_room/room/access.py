"""Per-session secrets and the room's MCP address: how an agent reaches the room's server
(``agent_room.mcp``) and how the server knows which agent is calling.

``agent-room start NAME`` mints a secret for the agent, keeps it in the room
(``mcp/NAME.token``, 0600 in the private room) and gives it to the agent in its
environment (``AGENT_ROOM_MCP_TOKEN``), read there by the shell that starts the client so
it never stands on a command line. The client sends it with every request
(``Authorization: Bearer ...``); the server maps it back to the name. Each agent has its
own, so one agent cannot speak as another: identity comes from the secret, never from a
tool's argument. Standard library only: the launcher and the relay use it.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import socket
import time
from pathlib import Path

from agent_room.turn.core.errors import RoomUnavailable
from agent_room.turn.core.names import is_valid_name, parse_name
from agent_room.turn.procfs import is_alive
from agent_room.turn.store.home import ensure_room_dir, open_private
from agent_room.turn.store.wake import listening

FOLDER = "mcp"
"""The room's folder for the server's files: secrets, its address."""
SUFFIX = ".token"
ENV_TOKEN = "AGENT_ROOM_MCP_TOKEN"  # noqa: S105 - a variable's name
"""The variable holding an agent's secret (named in the clients' MCP settings)."""
ENV_URL = "AGENT_ROOM_MCP_URL"
"""The variable holding the room's MCP address, ``http://127.0.0.1:PORT/mcp``."""
ENV_HOOK_URL = "AGENT_ROOM_HOOK_URL"
"""The variable holding the address of the room's hook endpoint (Claude Code's HTTP hooks)."""


ADDRESS = "address"
"""``mcp/address``: ``127.0.0.1:PORT``, the room's MCP address (kept across restarts)."""
SERVING = "serving"
"""``mcp/serving``: ``PID START_TICKS`` of the process serving now (removed when it stops)."""
HOST = "127.0.0.1"
MCP_PATH = "/mcp"


def folder(home: str) -> Path:
    """The room's MCP folder (made private if missing), in a room made before (by the
    command that starts it: the server never makes a room removed under it anew)."""
    path = Path(ensure_room_dir(home, create=False), FOLDER)
    with contextlib.suppress(FileExistsError):
        path.mkdir(0o700)
    if path.is_symlink() or not path.is_dir():
        raise RoomUnavailable(f"{path} is not a private folder of the room")
    return path


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (0600, written aside and renamed in)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    tmp.replace(path)


def token_path(home: str, name: str) -> Path:
    """Where the secret of agent ``name`` is kept."""
    return folder(home) / (parse_name(name) + SUFFIX)


def mint(home: str, name: str) -> Path:
    """A new secret for ``name`` (replacing its last one); return its file's path."""
    path = token_path(home, name)
    write_private(path, secrets.token_urlsafe(32) + "\n")
    return path


def read_token(path: Path) -> str | None:
    """The secret in ``path``, if it is a private regular file of ours."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or st.st_mode & 0o077 or not (st.st_mode & 0o100000):
            return None
        text = os.read(fd, 256).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    return text or None


class Tokens:
    """The room's secrets, by value, re-read when the folder changes (one ``stat`` a call)."""

    def __init__(self, home: str) -> None:
        self.path = folder(home)
        self._seen: tuple[int, int] | None = None
        self._names: dict[str, str] = {}

    def _refresh(self) -> None:
        st = self.path.stat()
        stamp = (st.st_mtime_ns, st.st_ino)
        if stamp == self._seen:
            return
        names: dict[str, str] = {}
        for entry in self.path.iterdir():
            name = entry.name.removesuffix(SUFFIX)
            if entry.name.endswith(SUFFIX) and is_valid_name(name):
                token = read_token(entry)
                if token:
                    names[token] = name
        self._names, self._seen = names, stamp

    def name_of(self, token: str | None) -> str | None:
        """The agent whose secret ``token`` is, or None (compared in constant time)."""
        if not token:
            return None
        self._refresh()
        for known, name in self._names.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return name
        return None


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def read_port(home: str) -> int | None:
    """The room's MCP port, if one was reserved."""
    try:
        host, _, port = Path(home, FOLDER, ADDRESS).read_text("ascii").strip().rpartition(":")
    except (OSError, UnicodeDecodeError):
        return None
    return int(port) if host == HOST and port.isdigit() and 0 < int(port) < 65536 else None


def reserve_port(home: str) -> int:
    """The room's MCP port: the one recorded, else a free one, recorded now (the first of
    two processes reserving at once wins: the file is linked in, never overwritten)."""
    port = read_port(home)
    if port is not None:
        return port
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port = int(probe.getsockname()[1])
    path = folder(home) / ADDRESS
    tmp = path.with_name(f"{ADDRESS}.{os.getpid()}.tmp")
    write_private(tmp, f"{HOST}:{port}\n")
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return read_port(home) or port


def url(port: int) -> str:
    """The MCP address agents are given."""
    return f"http://{HOST}:{port}{MCP_PATH}"


def serving_pid(home: str) -> int | None:
    """The process serving the room's tools now, if it is alive (the one that wrote it)."""
    try:
        words = Path(home, FOLDER, SERVING).read_text("ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(words) != 2 or not all(w.isdigit() for w in words):
        return None
    pid, start = int(words[0]), int(words[1])
    return pid if is_alive(pid, start) else None


TOKEN_FILE = "AGENT_ROOM_MCP_TOKEN_FILE"  # noqa: S105 - a variable's name
"""Where the shell that starts an agent reads its secret from (then unset)."""
WITH_TOKEN = (
    "sh",
    "-c",
    'read -r AGENT_ROOM_MCP_TOKEN < "$AGENT_ROOM_MCP_TOKEN_FILE"; export AGENT_ROOM_MCP_TOKEN;'
    ' unset AGENT_ROOM_MCP_TOKEN_FILE; exec "$@"',
    "agent-room",
)
"""What runs an agent with its secret in its environment: the secret is read from its
file by the shell, never put on a command line (``ps`` shows command lines); ``exec``
keeps the agent the pane's process."""


def agent_access(home: str, name: str) -> dict[str, str]:
    """The variables that let agent ``name`` call the room's server: its address and
    where a new secret of its own is (read by ``WITH_TOKEN``)."""
    return {ENV_URL: url(reserve_port(home)), TOKEN_FILE: str(mint(home, name))}


SERVE_WAIT = 5.0
"""Seconds ``start`` waits for the room's server before launching an agent: a client
that finds nothing at the address when it starts gives the server up for the session."""


def await_serving(home: str, timeout: float = SERVE_WAIT) -> bool:
    """Wait (while a watch runs for the room) until the room's tools are served."""
    if not listening(home):
        return False
    deadline = time.monotonic() + timeout
    while serving_pid(home) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


HTTP_EVENTS = ("UserPromptSubmit", "Stop", "StopFailure", "Notification")
"""The events of every turn, which a Claude Code agent started by the room sends to the
room's server as HTTP hooks (``agent_room.mcp.hooks_http``); the plugin's launcher lists
them too (``plugin/bin/agent-room-hook``)."""
HOOKS_VIA_HTTP = "AGENT_ROOM_HOOKS_HTTP"
"""Set (``1``) for an agent whose turn events also go to the room's server over HTTP: its
command hooks for them step aside while the server is serving."""


def http_hooks(mcp_url: str) -> dict[str, object]:
    """Claude Code settings that send ``HTTP_EVENTS`` to the room's server at
    ``mcp_url``'s host, with the agent's secret (named, never copied: Claude Code fills
    the header from the variable it is allowed to read)."""
    base = mcp_url.removesuffix(MCP_PATH)
    hook = {
        "type": "http",
        "headers": {"Authorization": f"Bearer ${ENV_TOKEN}"},
        "allowedEnvVars": [ENV_TOKEN],
        "timeout": 5,
    }
    return {
        "hooks": {
            event: [{"hooks": [{**hook, "url": f"{base}/hooks/{event}"}]}] for event in HTTP_EVENTS
        }
    }
