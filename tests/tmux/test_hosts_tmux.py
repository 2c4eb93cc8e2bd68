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
from agent_room.room.enter import Where
from agent_room.room.service import Room
from agent_room.turn.store.hosts import SILENT_AFTER
from agent_room.ui.app import make_app
from agent_room.ui.widgets.handovers import HandoverQueue
from agent_room.workers.deliverer import Deliverer
from tests.conftest import write_room_conf
from tests.pgcluster import Cluster
from tests.poll import wait_for
from tests.tmux.conftest import agent_command
from tests.ui.conftest import live_settings, until


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
    return "\n".join(pane.capture_pane(join_wrapped=True))  # a body is not cut by a wrap


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
    wait_for(lambda: "still there?" in _screen(frontend))

    # laptop silent for longer than SILENT_AFTER: seen from devbox, laptop's session is
    # unknown (nobody can judge its process), not ended; devbox's watcher still beats
    devbox.room.store.conn.execute(
        "UPDATE hosts SET seen_at = seen_at - $1 WHERE host = 'laptop'", (SILENT_AFTER + 1,)
    )
    seen_from_devbox = _states(devbox.room)
    assert seen_from_devbox["backend"] == "unknown"
    assert seen_from_devbox["frontend"] in ("idle", "busy")  # its own, judged on devbox
    assert _states(laptop.room)["frontend"] in ("idle", "busy")  # devbox is not silent


def _states(room: Room) -> dict[str, str]:
    return {row["name"]: row["state"] for row in room.who()}


@pytest.fixture
def anyio_backend() -> str:
    """Textual runs on asyncio."""
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("console_on", ["laptop", "devbox"])
async def test_a_handover_between_hosts_is_approved_from_a_console_on_either(
    two_hosts: tuple[Host, Host], console_on: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    laptop, devbox = two_hosts
    laptop.start_agent("backend")
    frontend = devbox.start_agent("frontend")
    laptop.thread.start()
    devbox.thread.start()
    handover = laptop.room.send_handover("backend", "frontend", body="take the billing work")
    monkeypatch.setenv("AGENT_ROOM_HOST", console_on)  # the console's own host
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    app = make_app(live_settings(laptop.home), mux=Tmux(), probe=SystemProbe(), where=where)
    async with app.run_test(size=(160, 48)) as pilot:
        queue = app.main.query_one("#queue", HandoverQueue)
        await until(pilot, lambda: queue.selected is not None and queue.selected.id == handover)
        await pilot.press("a")
        await until(pilot, lambda: _handover_state(laptop.room, handover) == "approved")
    wait_for(lambda: _delivered(devbox.room, handover))  # receipted by frontend, on devbox
    wait_for(lambda: "take the billing work" in _screen(frontend))


def _handover_state(room: Room, handover_id: int) -> str | None:
    row = room.store.handover(handover_id)
    return None if row is None else str(row["state"])
