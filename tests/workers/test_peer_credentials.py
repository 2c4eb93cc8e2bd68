"""The room's own peer socket believes a receipt only from the client it is about.

A receipt (``peer_message_status``) changes what the room records of a message: a third
process of the same user must not forge one. So every connection begins with the
room's token (the one its key file publishes, as a client's does), and the connecting
process (``SO_PEERCRED``) must be the live client whose socket the receipt names.
Real processes, a real registry folder and real sockets.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.adapters.claude_native import FileRegistry
from agent_room.adapters.claude_peer import PeerSocket
from agent_room.adapters.processes import SystemProbe
from agent_room.core.native import Receipt
from agent_room.turn.procfs import read_stat
from tests.poll import wait_for

SENDER = """
import socket, sys
path, lines = sys.argv[1], sys.argv[2]
sys.stdin.readline()  # go
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
    conn.connect(path)
    conn.sendall(lines.encode())
sys.stdin.readline()  # a client stays on after sending: until told to go
"""


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[PeerSocket]:
    folder = tmp_path / "socks"
    folder.mkdir(mode=0o700)
    made = PeerSocket(FileRegistry(tmp_path / "claude", SystemProbe()), folder=folder, cwd="/")
    made.open()
    yield made
    made.close()


def _token(peer: PeerSocket) -> str:
    """The room's token, read from its key file as a client reads a peer's."""
    digest = hashlib.sha256(str(peer.socket).encode()).hexdigest()
    key = peer.registry.sessions_dir / f"{peer.pid}.{digest}.key"
    return str(json.loads(key.read_text())["peerToken"])


def _status(socket_path: str) -> dict[str, object]:
    return {
        "type": "control",
        "action": "peer_message_status",
        "status": "denied",
        "from": f"uds:{socket_path}",
        "orig_msg_id": str(uuid.uuid4()),
        "msgV": 1,
    }


def _send(
    peer: PeerSocket, lines: list[object], *, entry_socket: str | None = None
) -> list[object]:
    """Write ``lines`` to the room's socket from a process of its own (listed in the
    clients' registry with ``entry_socket`` as its messaging socket, if given); what the
    room made of them."""
    text = "".join(json.dumps(line) + "\n" for line in lines)
    proc = subprocess.Popen(
        [sys.executable, "-c", SENDER, str(peer.socket), text], stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    entry = peer.registry.sessions_dir / f"{proc.pid}.json"
    try:
        if entry_socket is not None:
            stat = read_stat(proc.pid)
            assert stat is not None
            record = {
                "pid": proc.pid,
                "sessionId": str(uuid.uuid4()),
                "cwd": "/",
                "procStart": str(stat.start_ticks),
                "status": "idle",
                "kind": "interactive",
                "peerProtocol": 1,
                "messagingSocketPath": entry_socket,
            }
            entry.write_text(json.dumps(record))
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        found: list[object] = []

        def arrived() -> bool:
            found.extend(peer.receipts())
            return bool(found)

        wait_for(arrived, timeout=10)
        proc.stdin.close()
        proc.wait(timeout=10)
    finally:
        entry.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return found


def test_a_client_that_authenticates_is_believed_about_its_own_socket(peer: PeerSocket) -> None:
    mine = "/run/client/4242.sock"
    status = _status(mine)
    (found,) = _send(peer, [{"type": "auth", "token": _token(peer)}, status], entry_socket=mine)
    assert isinstance(found, Receipt)
    assert (found.status, found.sender_socket) == ("denied", mine)


@pytest.mark.parametrize("how", ["no auth line", "a wrong token", "another client's socket"])
def test_a_spoofed_peer_message_status_is_refused(peer: PeerSocket, how: str) -> None:
    client = "/run/client/4242.sock"
    status = _status(client)
    ways: dict[str, list[object]] = {
        "no auth line": [status],
        "a wrong token": [{"type": "auth", "token": "0" * 32}, status],
        "another client's socket": [{"type": "auth", "token": _token(peer)}, status],
    }
    lines = ways[how]
    own = "/run/client/other.sock" if how == "another client's socket" else None
    (found,) = _send(peer, lines, entry_socket=own)
    assert isinstance(found, str), found
    assert "refused" in found
