"""The deliverer through Claude Code's messaging socket: sent, held, refused, failed, and
the faults that send it back to the pane.

Real Unix sockets on both sides: the room's peer (``PeerSocket``, its registry entry in
a private folder) and a recipient that answers as the client 2.1.330 does (its frames as
recorded in tests/fixtures/claude-native). The registry entry of the recipient is given
by the test; tmux is a scripted multiplexer that records what would be typed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_room.adapters.claude_native import FileRegistry
from agent_room.adapters.claude_peer import PeerSocket
from agent_room.adapters.processes import SystemProbe
from agent_room.core.delivery import RECEIPT_TIMEOUT
from agent_room.core.native import SETTING, SOCKET_WAIT, NativeSession, SocketFacts
from agent_room.room.service import Room, connect_long_lived
from agent_room.store.settings import SettingsStore
from agent_room.turn.room.delivery import receive
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.native import NativeStore
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.native import NativeDelivery
from tests.conftest import FIXTURES
from tests.ui.seed import AliveProbe
from tests.workers.test_deliverer_retries import Clock, ScriptedMux

SESSION = "b8220c56-d5dd-46db-a341-746a21195aa9"
PID = 28538
WIRE = FIXTURES / "claude-native" / "fake-recipient-wire.jsonl"


def room_token(peer: PeerSocket) -> str:
    """The token the room publishes for its peers, read from its key file as a client does."""
    digest = hashlib.sha256(str(peer.socket).encode()).hexdigest()
    key = peer.registry.sessions_dir / f"{peer.pid}.{digest}.key"
    return str(json.loads(key.read_text())["peerToken"])


def _recorded(action: str, status: str | None = None) -> dict[str, Any]:
    """A frame a real client sent, from the recording."""
    for line in WIRE.read_text().splitlines():
        frame = json.loads(line).get("json", {})
        if frame.get("action") == action and (status is None or frame.get("status") == status):
            return dict(frame)
    raise AssertionError(f"no recorded {action} {status}")


class Client:
    """A recipient's messaging socket: records each line, answers as told."""

    def __init__(self, folder: Path) -> None:
        self.path = str(folder / f"{PID}.sock")
        self.lines: list[dict[str, Any]] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        os.chmod(self.path, 0o600)
        self.server.listen(8)
        self.got = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                data = b""
                while chunk := conn.recv(65536):
                    data += chunk
            self.lines += [json.loads(line) for line in data.splitlines() if line.strip()]
            self.got.set()

    def frames(self, kind: str = "user") -> list[dict[str, Any]]:
        return [f for f in self.lines if f.get("type") == kind]

    def answer(self, to: str, token: str, frame: dict[str, Any]) -> None:
        """Write a receipt to the room's socket, as the client does (one connection, the
        room's token from its key file first)."""
        auth = json.dumps({"type": "auth", "token": token}).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(to)
            conn.sendall(auth + b"\n" + json.dumps(frame).encode() + b"\n")

    def close(self) -> None:
        """Stop listening, as a client that exits does (its socket file may stay)."""
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self.server.close()


class Registry_(FileRegistry):
    """The real registry reader, with the recipient's entry given by the test. The test
    process plays the client when it answers: the room checks the answering pid's entry."""

    def __init__(self, root: Path, client: Client) -> None:
        super().__init__(root, AliveProbe())
        self.client = client
        self.protocol = 1
        self.written = True
        """Whether the client has written its entry yet (it does after SessionStart)."""

    def entry(self, pid: int) -> NativeSession | None:
        if pid not in (PID, os.getpid()) or not self.written:
            return None
        return NativeSession(
            pid=PID,
            session_id=SESSION,
            cwd="/home/dev/app",
            kind="interactive",
            status="idle",
            proc_start=116424,
            peer_protocol=self.protocol,
            socket=self.client.path,
        )


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "socks"
    made.mkdir(mode=0o700)
    return made


@pytest.fixture
def client(folder: Path) -> Iterator[Client]:
    made = Client(folder)
    yield made
    made.close()


@pytest.fixture
def room(room_home: Path, clock: Clock) -> Iterator[Room]:
    opened = Room(SqliteStore(str(room_home), open_postgres=connect_long_lived), clock=clock)
    opened.join("backend")
    Registry(opened, AliveProbe()).register(
        SessionFacts(
            session_id=SESSION,
            cwd="/home/dev/app",
            transcript_path=None,
            pid=PID,
            pid_start=116424,
            pane="%1",
            name="frontend",
        )
    )
    yield opened
    opened.close()


@pytest.fixture
def registry(tmp_path: Path, client: Client) -> Registry_:
    return Registry_(tmp_path / "claude", client)


@pytest.fixture
def peer(registry: Registry_, folder: Path, room: Room) -> Iterator[PeerSocket]:
    made = PeerSocket(registry, folder=folder, cwd=room.home)
    yield made
    made.close()


@pytest.fixture
def mux() -> ScriptedMux:
    return ScriptedMux()


@pytest.fixture
def deliverer(
    room: Room, mux: ScriptedMux, registry: Registry_, peer: PeerSocket
) -> Iterator[Deliverer]:
    native = NativeDelivery(room, registry, peer)
    made = Deliverer(room, mux, AliveProbe(), native=native)
    yield made
    made.release()


def _status(room: Room, message_id: int) -> str:
    row = room.store.message(message_id)
    assert row is not None
    return str(row["status"])


def _sent(client: Client, count: int = 1) -> list[dict[str, Any]]:
    for _ in range(200):
        if len(client.frames()) >= count:
            break
        threading.Event().wait(0.01)
    return client.frames()


def _settle(deliverer: Deliverer, peer: PeerSocket, clock: Clock) -> None:
    """Let a receipt written to the room's socket be read, then make a pass."""
    for _ in range(200):
        if not peer._found.empty():
            break
        threading.Event().wait(0.01)
    clock.now += 0.1
    deliverer.run_once()


def test_a_nudge_goes_through_the_socket_and_nothing_is_typed(
    room: Room, deliverer: Deliverer, client: Client, mux: ScriptedMux, peer: PeerSocket
) -> None:
    message_id = room.send("backend", "frontend", "the contract moved")
    assert deliverer.run_once()
    (frame,) = _sent(client)
    recorded = _recorded_user()
    assert set(frame) == set(recorded)  # the shape the client's own SendMessage writes
    assert frame["msgV"] == 1
    assert frame["from"] == f"uds:{peer.socket}"
    content = frame["message"]["content"]
    assert content.startswith('<cross-session-message from="uds:')
    assert f"[agent-room] 1 new message from @backend (#{message_id})" in content
    assert "the contract moved" not in content  # the body goes through the hook, not here
    assert mux.calls == []
    # the recipient's hook sees the wrapper and receipts: delivered, through the socket
    prompt = content
    from agent_room.turn.core.peer_prompt import parse_peer_prompt
    from agent_room.turn.core.prompts import classify

    peer_prompt = parse_peer_prompt(prompt)
    assert peer_prompt is not None
    ids = classify(peer_prompt.body).message_ids
    assert receive(room, "frontend", ids, via="native")
    assert receive(room, "frontend", ids, via="native") is None  # never twice
    assert room.store.message(message_id)["via"] == "native"  # type: ignore[index]
    deliverer.run_once()
    assert room.store.open_nudge("frontend") is None


def _receipt(
    client: Client,
    peer: PeerSocket,
    deliverer: Deliverer,
    clock: Clock,
    frame: dict[str, Any],
    status: dict[str, Any],
) -> None:
    """The client's ``status`` for ``frame``, sent from its socket to the room's; a pass."""
    receipt = status | {"orig_msg_id": frame["msg_id"], "from": f"uds:{client.path}"}
    client.answer(str(peer.socket), room_token(peer), receipt)
    _settle(deliverer, peer, clock)


def _recorded_user() -> dict[str, Any]:
    for line in WIRE.read_text().splitlines():
        frame = json.loads(line).get("json", {})
        if frame.get("type") == "user":
            return dict(frame)
    raise AssertionError("no recorded user frame")


def test_held_by_the_client_the_room_says_why_and_sends_nothing_again(
    room: Room,
    deliverer: Deliverer,
    client: Client,
    mux: ScriptedMux,
    peer: PeerSocket,
    clock: Clock,
) -> None:
    message_id = room.send("backend", "frontend", "run the migrations")
    deliverer.run_once()
    (frame,) = _sent(client)
    _receipt(client, peer, deliverer, clock, frame, _recorded("peer_message_status", "held"))
    note = room.store.notes()["frontend"]
    assert "held by its client for its user's approval" in note
    assert "approve it in its pane" in note
    clock.now += RECEIPT_TIMEOUT * 10  # long past the receipt timeout: still held, not resent
    deliverer.run_once()
    assert len(client.frames()) == 1
    assert _status(room, message_id) == "queued"
    assert mux.calls == []


def test_delivered_after_a_long_hold_the_room_waits_for_the_hook_not_offering_it_again(
    room: Room, deliverer: Deliverer, client: Client, peer: PeerSocket, clock: Clock
) -> None:
    """The user chose Deliver long after the frame was sent: the client says so at once,
    and the recipient's hook receipts a moment later. A pass woken by the status in
    between must not take the nudge's first try as the time to wait from."""
    message_id = room.send("backend", "frontend", "run the migrations")
    deliverer.run_once()
    (frame,) = _sent(client)
    held = _recorded("peer_message_status", "held")
    _receipt(client, peer, deliverer, clock, frame, held)
    clock.now += RECEIPT_TIMEOUT * 10  # its user takes a while to decide
    deliverer.run_once()
    _receipt(client, peer, deliverer, clock, frame, held | {"status": "delivered"})
    assert len(client.frames()) == 1  # not offered again: the hook's receipt is on its way
    assert room.store.notes().get("frontend", "") == ""
    nudge = room.store.open_nudge("frontend")
    assert nudge is not None
    assert receive(room, "frontend", tuple(nudge["message_ids"]), via="native")
    deliverer.run_once()
    assert _status(room, message_id) == "delivered"
    assert room.store.open_nudge("frontend") is None
    assert len(client.frames()) == 1


def test_a_held_status_read_after_the_final_one_changes_nothing(
    room: Room, deliverer: Deliverer, client: Client, peer: PeerSocket, clock: Clock
) -> None:
    """Each status comes on a connection of its own, read by a thread of its own: under
    load the earlier one can be read last."""
    room.send("backend", "frontend", "run the migrations")
    deliverer.run_once()
    (frame,) = _sent(client)
    held = _recorded("peer_message_status", "held")
    _receipt(client, peer, deliverer, clock, frame, held | {"status": "delivered"})
    _receipt(client, peer, deliverer, clock, frame, held)
    nudge = room.store.open_nudge("frontend")
    assert nudge is not None
    sent = NativeStore(room.store).latest_for_nudge(int(nudge["id"]))
    assert sent is not None
    assert sent["status"] == "delivered"
    assert "held" not in room.store.notes().get("frontend", "")


def test_delivered_by_the_client_but_no_hook_receipt_it_is_offered_again_in_time(
    room: Room, deliverer: Deliverer, client: Client, peer: PeerSocket, clock: Clock
) -> None:
    room.send("backend", "frontend", "run the migrations")
    deliverer.run_once()
    (frame,) = _sent(client)
    delivered = _recorded("peer_message_status", "held") | {"status": "delivered"}
    _receipt(client, peer, deliverer, clock, frame, delivered)
    assert len(client.frames()) == 1
    clock.now += RECEIPT_TIMEOUT + 1  # no hook spoke for it: the next try goes out
    deliverer.run_once()
    assert len(_sent(client, 2)) == 2


def test_denied_by_the_user_the_message_fails_with_the_reason(
    room: Room, deliverer: Deliverer, client: Client, peer: PeerSocket, clock: Clock
) -> None:
    message_id = room.send("backend", "frontend", "run the migrations")
    deliverer.run_once()
    (frame,) = _sent(client)
    denied = _recorded("peer_message_status", "held") | {"status": "denied"}
    _receipt(client, peer, deliverer, clock, frame, denied)
    row = room.store.message(message_id)
    assert row is not None
    assert row["status"] == "failed"
    assert "denied by its user" in str(row["failure"])


def test_a_client_that_refuses_peers_is_reached_through_the_pane(
    room: Room,
    deliverer: Deliverer,
    client: Client,
    mux: ScriptedMux,
    peer: PeerSocket,
    clock: Clock,
) -> None:
    message_id = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    (frame,) = _sent(client)
    refused = {
        "type": "control",
        "action": "peer_message_status",
        "status": "expired",
        "status_detail": "refused",
        "msgV": 1,
        "msg_id": "r-1",
    }
    _receipt(client, peer, deliverer, clock, frame, refused)
    typed = [c for c in mux.calls if c[0] == "type_line"]
    nudge = f"[agent-room] 1 new message from @backend (#{message_id})"
    assert [c[:3] for c in typed] == [("type_line", "%1", nudge)]
    assert _status(room, message_id) == "queued"  # waiting for the typed nudge's receipt


def test_a_socket_gone_mid_send_falls_back_to_the_pane_and_loses_nothing(
    room: Room, deliverer: Deliverer, client: Client, mux: ScriptedMux
) -> None:
    client.close()
    Path(client.path).unlink()
    Path(client.path).write_text("")  # something else at its path now: not a socket
    message_id = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert [c[0] for c in mux.calls] == ["type_line"]
    assert _status(room, message_id) == "queued"


def test_a_socket_that_refuses_the_connection_falls_back_to_the_pane(
    room: Room, deliverer: Deliverer, client: Client, mux: ScriptedMux
) -> None:
    client.close()  # the file stays, nobody listens: connect() is refused
    message_id = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert [c[0] for c in mux.calls] == ["type_line"]
    events = [e["kind"] for e in room.store.events()]
    assert "native.fallback" in events
    nudges = room.store.conn.execute("SELECT state FROM nudges ORDER BY id").fetchall()
    assert [n[0] for n in nudges] == ["unsent", "open"]  # the unsent one never counts
    assert _status(room, message_id) == "queued"


def test_native_only_holds_with_the_reason_where_there_is_no_socket(
    room: Room, deliverer: Deliverer, client: Client, registry: Registry_, mux: ScriptedMux
) -> None:
    SettingsStore(room.store).save({SETTING: "native"}, at=room.clock(), by="operator")
    registry.protocol = 2  # a protocol the room does not know
    message_id = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert mux.calls == []
    assert client.frames() == []
    note = room.store.notes()["frontend"]
    assert note.startswith("native delivery only, and its client speaks native protocol 2")
    assert _status(room, message_id) == "queued"


@pytest.mark.parametrize("preference", ["native-first", "native"])
def test_a_message_waiting_at_registration_waits_for_the_socket(
    room: Room,
    deliverer: Deliverer,
    client: Client,
    registry: Registry_,
    mux: ScriptedMux,
    clock: Clock,
    preference: str,
) -> None:
    """The room's SessionStart comes before the client writes its registry entry: the
    message waits for the socket (bounded), and nothing is typed meanwhile."""
    SettingsStore(room.store).save({SETTING: preference}, at=room.clock(), by="operator")
    registry.written = False
    message_id = room.send("backend", "frontend", "waiting at registration")
    deliverer.run_once()
    clock.now += 0.4
    deliverer.run_once()
    assert mux.calls == []
    assert client.frames() == []
    assert room.store.notes()["frontend"] == "waiting for its client's messaging socket"
    registry.written = True
    clock.now += 0.1
    deliverer.run_once()
    assert len(_sent(client)) == 1
    assert mux.calls == []
    assert _status(room, message_id) == "queued"  # until its hook receipts it


def test_a_client_that_never_writes_its_entry_is_typed_to_after_the_wait(
    room: Room,
    deliverer: Deliverer,
    client: Client,
    registry: Registry_,
    mux: ScriptedMux,
    clock: Clock,
) -> None:
    registry.written = False  # an older client: no registry, no socket
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert mux.calls == []
    clock.now += SOCKET_WAIT
    deliverer.run_once()
    assert [c[0] for c in mux.calls] == ["type_line"]
    assert client.frames() == []


def test_tmux_only_never_touches_the_socket(
    room: Room, deliverer: Deliverer, client: Client, mux: ScriptedMux
) -> None:
    SettingsStore(room.store).save({SETTING: "tmux"}, at=room.clock(), by="operator")
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert [c[0] for c in mux.calls] == ["type_line"]
    assert client.frames() == []


def test_foreign_and_malformed_receipts_change_nothing(
    room: Room,
    deliverer: Deliverer,
    client: Client,
    peer: PeerSocket,
    clock: Clock,
) -> None:
    message_id = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    (frame,) = _sent(client)
    held = _recorded("peer_message_status", "held") | {"from": f"uds:{client.path}"}
    token = room_token(peer)
    client.answer(str(peer.socket), token, held)  # a receipt for a frame the room never sent
    client.answer(str(peer.socket), token, held | {"orig_msg_id": frame["msg_id"], "msgV": 9})
    client.answer(  # the right frame, but about another socket than the answering client's
        str(peer.socket),
        token,
        held | {"orig_msg_id": frame["msg_id"], "from": "uds:/tmp/x.sock"},
    )
    _settle(deliverer, peer, clock)
    threading.Event().wait(0.2)
    deliverer.run_once()
    assert "frontend" not in room.store.notes()
    reasons = [e["data"]["reason"] for e in room.store.events() if e["kind"] == "native.ignored"]
    assert any("protocol version 9" in r for r in reasons)
    assert sum("no frame the room sent" in r for r in reasons) == 1
    assert sum("a socket not its own" in r for r in reasons) == 1
    assert _status(room, message_id) == "queued"


def test_a_busy_recipient_is_never_asked_to_say_when_it_is_idle(
    room: Room, deliverer: Deliverer, client: Client, peer: PeerSocket
) -> None:
    """A ``notify_when_idle`` request shows in the recipient's transcript ("A process
    claiming the address ... asked to be told when this session is next idle"): the room
    reads the client's registry instead and sends nothing until it delivers."""
    room.store.set_state(SESSION, "busy", at=room.clock())
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    deliverer.run_once()
    client.got.wait(0.3)
    assert client.frames("control") == []
    assert client.frames() == []  # the message itself waits for the turn boundary


def _recorded_control(action: str) -> dict[str, Any]:
    for line in WIRE.read_text().splitlines():
        frame = json.loads(line).get("json", {})
        if frame.get("action") == action:
            return dict(frame)
    raise AssertionError(f"no recorded {action}")


def test_the_peer_is_listed_in_the_clients_registry_and_leaves_no_trace(
    registry: Registry_, peer: PeerSocket, room: Room
) -> None:
    peer.open()
    assert peer.socket is not None
    entries = list(registry.sessions_dir.glob("*.json"))
    (entry,) = [json.loads(e.read_text()) for e in entries]
    assert entry["messagingSocketPath"] == peer.socket
    assert entry["pid"] == os.getpid()
    assert entry["agentRoomPeer"] is True
    keys = list(registry.sessions_dir.glob("*.key"))
    assert len(keys) == 1
    assert keys[0].stat().st_mode & 0o077 == 0
    facts = registry.socket_facts(peer.socket)
    assert facts == SocketFacts(
        is_socket=True,
        uid=os.getuid(),
        mode=0o600,
        dir_uid=os.getuid(),
        dir_mode=0o700,
    )
    assert FileRegistry(registry.root, SystemProbe()).sessions() == []  # never an agent
    peer.close()
    assert list(registry.sessions_dir.iterdir()) == []


def test_the_room_becomes_a_peer_only_once_a_client_is_reachable(
    room: Room, deliverer: Deliverer, client: Client, registry: Registry_, peer: PeerSocket
) -> None:
    registry.protocol = 0  # no client the room can reach
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert peer.socket is None
    assert not registry.sessions_dir.exists()  # nothing written into the clients' folder
    registry.protocol = 1
    deliverer.run_once()  # the open nudge went through the pane; the next message ...
    room.send("backend", "frontend", "again")
    with write_transaction(room.store.conn) as conn:
        conn.execute("UPDATE nudges SET state = 'done'")
    deliverer.run_once()
    assert peer.socket is not None
    assert len(_sent(client)) == 1


def test_an_idle_notice_wakes_the_deliverer(
    registry: Registry_, folder: Path, room: Room, client: Client
) -> None:
    woken = threading.Event()
    peer = PeerSocket(registry, folder=folder, cwd=room.home, on_receipt=woken.set)
    try:
        peer.open()
        notice = _recorded_control("peer_idle_notice") | {"from": f"uds:{client.path}"}
        client.answer(str(peer.socket), room_token(peer), notice)
        assert woken.wait(5)
        (receipt,) = peer.receipts()
        assert not isinstance(receipt, str)
        assert receipt.orig_msg_id == notice["orig_msg_id"]
    finally:
        peer.close()


def test_an_agent_outside_tmux_is_reached_through_its_socket(
    room: Room, deliverer: Deliverer, client: Client, mux: ScriptedMux
) -> None:
    with write_transaction(room.store.conn) as conn:
        conn.execute("UPDATE sessions SET pane = NULL WHERE name = 'frontend'")
    message_id = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    (frame,) = _sent(client)
    assert f"(#{message_id})" in frame["message"]["content"]
    assert mux.calls == []
    assert "frontend" not in room.store.notes()  # not held as "not in tmux"


def test_a_killed_peers_entry_is_taken_out_by_the_next(
    tmp_path: Path, folder: Path, room: Room
) -> None:
    registry = FileRegistry(tmp_path / "claude", SystemProbe())
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    first = PeerSocket(registry, folder=folder, cwd=room.home)
    first.pid = dead.pid  # a peer that was killed: its files stay behind
    first.open()
    first._stop.set()
    first._files.clear()  # as after a SIGKILL: nothing removed
    assert len(list(registry.sessions_dir.iterdir())) == 2
    second = PeerSocket(registry, folder=folder, cwd=room.home)
    try:
        second.open()
        left = sorted(p.name for p in registry.sessions_dir.iterdir())
        assert left[-1] == f"{os.getpid()}.json"
        assert not any(name.startswith(f"{dead.pid}.") for name in left)
        assert not (folder / f"{dead.pid}.sock").exists()
    finally:
        second.close()
        first.close()
