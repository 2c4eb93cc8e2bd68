"""Two hosts of one room on PostgreSQL, simulated on this machine: two tmux servers, two
host ids, two watchers. Each watcher types only into its own host's panes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import libtmux
import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.adapters.tmux import Tmux
from agent_room.room import Room
from agent_room.workers.deliverer import Deliverer
from tests.conftest import write_room_conf
from tests.pgcluster import Cluster
from tests.tmux.conftest import agent_command, wait_for


class Host:
    """One simulated machine: its host id, its tmux server, its watcher."""

    def __init__(self, name: str, home: Path, server: libtmux.Server) -> None:
        self.name = name
        self.home = home
        self.server = server
        self.stop = threading.Event()
        self.room = Room.open({"AGENT_ROOM_HOME": str(home)})
        self.own = Room.open({"AGENT_ROOM_HOME": str(home)})  # the watcher's connection
        self.worker = Deliverer(self.own, Tmux(), SystemProbe(), receipt_timeout=1.0)
        self.thread = threading.Thread(target=self.worker.run, args=(self.stop,), daemon=True)

    def start_agent(self, agent: str) -> libtmux.Pane:
        command = f"env AGENT_ROOM_HOST={self.name} {agent_command(self.home, agent)}"
        session = self.server.new_session(session_name=f"ac-{agent}", window_command=command)
        pane = session.active_window.active_pane
        assert pane is not None
        wait_for(lambda: f"You are @{agent}" in _screen(pane))
        return pane

    def halt(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def _screen(pane: libtmux.Pane) -> str:
    return "\n".join(pane.capture_pane())


@pytest.fixture
def two_hosts(
    tmp_path: Path, pg_cluster: Cluster, server: libtmux.Server, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Host, Host]]:
    home = tmp_path / "room"
    write_room_conf(home, pg_cluster.new_room(f"room_{time.monotonic_ns()}"))
    monkeypatch.setenv("AGENT_ROOM_HOME", str(home))
    other = libtmux.Server(socket_name=f"agent-room-devbox-{time.monotonic_ns()}")
    made = []
    for name, tmux in (("laptop", server), ("devbox", other)):
        monkeypatch.setenv("AGENT_ROOM_HOST", name)  # read when the store opens
        made.append(Host(name, home, tmux))
    laptop, devbox = made
    yield laptop, devbox
    for host in made:
        host.halt()
        host.room.close()
        host.own.close()
    other.kill()


def _delivered(room: Room, message_id: int) -> bool:
    message = room.store.message(message_id)
    return message is not None and message["status"] == "delivered"


def test_a_message_crosses_hosts_and_one_hosts_watcher_stopping_leaves_the_other(
    two_hosts: tuple[Host, Host],
) -> None:
    laptop, devbox = two_hosts
    backend = laptop.start_agent("backend")
    frontend = devbox.start_agent("frontend")
    hosts = {m["name"]: m["host"] for m in laptop.room.store.members()}
    assert hosts == {"backend": "laptop", "frontend": "devbox"}
    laptop.thread.start()
    devbox.thread.start()
    first = laptop.room.send("backend", "frontend", "the contract is ready")
    wait_for(lambda: _delivered(laptop.room, first))
    wait_for(lambda: "the contract is ready" in _screen(frontend))  # on devbox, by devbox
    assert laptop.worker.lease.name == "deliverer@laptop"
    assert devbox.worker.lease.name == "deliverer@devbox"
    assert "new message" not in _screen(backend)  # nothing for laptop's own agent

    handover = laptop.room.send_handover("backend", "frontend", body="take the billing work")
    devbox.room.approve(handover)  # decided from the other host's console
    wait_for(lambda: _delivered(laptop.room, handover))

    laptop.halt()  # laptop's watcher stops: devbox goes on by itself
    second = laptop.room.send("backend", "frontend", "still there?")
    wait_for(lambda: _delivered(devbox.room, second))
