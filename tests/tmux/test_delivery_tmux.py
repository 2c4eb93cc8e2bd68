"""Delivery into real tmux panes, with the stand-in agent firing the real hooks."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import libtmux
import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.adapters.tmux import Tmux
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.workers.deliverer import Deliverer, delivery_lease
from tests.poll import wait_for
from tests.tmux.conftest import agent_command


def screen(pane: libtmux.Pane) -> str:
    """What the pane shows, its wrapped lines joined (a long line wraps where its length
    says, and a text looked for must not be cut there)."""
    return "\n".join(pane.capture_pane(join_wrapped=True))


@pytest.fixture
def room(room_home: Path) -> Iterator[Room]:
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    opened.join("backend")
    yield opened
    opened.close()


@pytest.fixture
def deliverer(room_home: Path) -> Iterator[Deliverer]:
    """A deliverer running in the background on its own connection to the room."""
    own = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    worker = Deliverer(own, Tmux(), SystemProbe(), receipt_timeout=1.0)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()
    yield worker
    stop.set()
    thread.join(timeout=10)
    own.close()


def start_agent(server: libtmux.Server, room_home: Path, name: str) -> libtmux.Pane:
    session = server.new_session(
        session_name=f"ac-{name}", window_command=agent_command(room_home, name)
    )
    pane = session.active_window.active_pane
    assert pane is not None
    wait_for(lambda: f"You are @{name}" in screen(pane))
    return pane


def _delivered_events(room: Room, message_id: int) -> int:
    return sum(
        1
        for e in audit_events(room)
        if e.kind == "message.delivered" and e.message_id == message_id
    )


def test_idle_agent_gets_a_nudge_and_receipts_once(
    server: libtmux.Server, room_home: Path, room: Room, deliverer: Deliverer
) -> None:
    pane = start_agent(server, room_home, "frontend")
    mid = room.send("backend", "frontend", "the contract is ready")
    wait_for(lambda: "CONTEXT:" in screen(pane))
    text = screen(pane)
    assert f"[agent-room] 1 new message from @backend (#{mid})" in text
    assert "the contract is ready" in text  # the body came through the hook, not the keys
    message = room.store.message(mid)
    assert message is not None
    assert message["status"] == "delivered"
    wait_for(lambda: room.store.open_nudge("frontend") is None)
    assert _delivered_events(room, mid) == 1
    assert text.count("PROMPT: [agent-room]") == 1  # one nudge, submitted once


def test_several_queued_messages_go_out_as_one_nudge(
    server: libtmux.Server, room_home: Path, room: Room
) -> None:
    pane = start_agent(server, room_home, "frontend")
    ids = [room.send("backend", "frontend", f"part {n}") for n in range(3)]
    own = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    Deliverer(own, Tmux(), SystemProbe()).run_once()
    own.close()
    wait_for(lambda: "CONTEXT:" in screen(pane))
    assert f"3 new messages from @backend (#{ids[0]} #{ids[1]} #{ids[2]})" in screen(pane)
    assert all(room.store.message(i)["status"] == "delivered" for i in ids)  # type: ignore[index]


def test_shell_prompt_receives_nothing_and_bodies_never_run(
    server: libtmux.Server, room_home: Path, room: Room, deliverer: Deliverer, tmp_path: Path
) -> None:
    shell = server.new_session(session_name="ac-shell", window_command="bash --norc")
    pane = shell.active_window.active_pane
    assert pane is not None
    # a hand-joined name for a pane at a bash prompt, and an agent whose process is a shell
    room.join("shellpane", pane=pane.pane_id)
    marker = tmp_path / "pwned"
    evil = f"$(touch {marker}) `touch {marker}` \x1b[201~; touch {marker}\n\x03"
    room.send("backend", "shellpane", evil)
    wait_for(lambda: room.who()[-1]["delivery"] != "")
    assert "no agent process" in room.who()[-1]["delivery"]
    assert not marker.exists()
    assert "agent-room" not in screen(pane)


def test_agent_exited_to_a_shell_gets_nothing(
    server: libtmux.Server, room_home: Path, room: Room, deliverer: Deliverer
) -> None:
    session = server.new_session(session_name="ac-frontend", window_command="bash --norc")
    pane = session.active_window.active_pane
    assert pane is not None
    pane.send_keys(agent_command(room_home, "frontend"), enter=True)
    wait_for(lambda: "You are @frontend" in screen(pane))
    pane.send_keys("C-d", enter=False)  # end of input: the stand-in exits to bash
    wait_for(lambda: room.store.holder("frontend")["state"] == "ended")  # type: ignore[index]
    agent = room.store.holder("frontend")
    assert agent is not None
    # gone as that process (a zombie or a reused pid is not it), and bash has the terminal
    wait_for(lambda: not SystemProbe().is_alive(agent["pid"], agent["pid_start"]))
    wait_for(
        lambda: pane.cmd("display-message", "-p", "#{pane_current_command}").stdout == ["bash"]
    )
    # a registry that missed the end: it still says idle, for the same (dead) process
    room.store.set_state(room.store.holder("frontend")["session_id"], "idle", at=0)  # type: ignore[index]
    room.send("backend", "frontend", "anyone there?")
    wait_for(lambda: any(s["delivery"] for s in room.who() if s["name"] == "frontend"))
    assert "new message" not in screen(pane)


def test_busy_agent_gets_messages_at_the_turn_boundary(
    server: libtmux.Server, room_home: Path, room: Room, deliverer: Deliverer
) -> None:
    pane = start_agent(server, room_home, "frontend")
    pane.send_keys("/work 2", enter=True)
    wait_for(lambda: "WORKING" in screen(pane))
    ids = [room.send("backend", "frontend", f"while busy {n}") for n in range(10)]
    wait_for(lambda: "BLOCKED:" in screen(pane), timeout=15)
    text = screen(pane)
    assert "10 new messages for @frontend" in text
    assert "new messages from @backend" not in text  # no nudge was typed while busy
    assert all(_delivered_events(room, i) == 1 for i in ids)


def test_permission_dialog_holds_then_delivers_once(
    server: libtmux.Server, room_home: Path, room: Room, deliverer: Deliverer
) -> None:
    pane = start_agent(server, room_home, "frontend")
    pane.send_keys("/permission", enter=True)
    wait_for(lambda: "PERMISSION?" in screen(pane))
    mid = room.send("backend", "frontend", "after the dialog")
    wait_for(lambda: any("permission" in s["delivery"] for s in room.who()))
    assert "PERMISSION answered" not in screen(pane)  # no keys went into the dialog
    pane.send_keys("y", enter=True)
    wait_for(lambda: "PERMISSION answered" in screen(pane))
    wait_for(lambda: room.store.message(mid)["status"] == "delivered")  # type: ignore[index]
    wait_for(lambda: "after the dialog" in screen(pane))
    assert _delivered_events(room, mid) == 1
    # nothing waits any more: the note about the dialog goes, however it was delivered
    wait_for(lambda: not next(s for s in room.who() if s["name"] == "frontend")["delivery"])


def test_killed_deliverer_is_replaced_and_nothing_is_delivered_twice(
    server: libtmux.Server, room_home: Path, room: Room
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    pane = start_agent(server, room_home, "frontend")
    env = {**os.environ, "AGENT_ROOM_HOME": str(room_home)}
    watchers = [
        subprocess.Popen(
            [sys.executable, "-m", "agent_room", "watch"], env=env, stderr=subprocess.DEVNULL
        )
        for _ in range(2)
    ]
    try:
        wait_for(lambda: room.store.lease(delivery_lease(room)))
        ids = []
        for n in range(30):
            ids.append(room.send("backend", "frontend", f"burst {n}"))
            if n == 10:
                lease = room.store.lease(delivery_lease(room))
                assert lease is not None
                os.kill(int(lease["pid"]), signal.SIGKILL)
            time.sleep(0.05)
        wait_for(
            lambda: all(room.store.message(i)["status"] == "delivered" for i in ids),  # type: ignore[index]
            timeout=30,
        )
        for message_id in ids:
            assert _delivered_events(room, message_id) == 1
        survivor = room.store.lease(delivery_lease(room))
        assert survivor is not None
        assert survivor["pid"] in {w.pid for w in watchers}
        assert "burst 29" in screen(pane) or _delivered_events(room, ids[-1]) == 1
    finally:
        for watcher in watchers:
            watcher.kill()
            watcher.wait()


ORPHAN = """
import os, sys, time
if os.fork() == 0:
    if os.fork() == 0:  # the agent: on the pane's terminal and in its foreground group,
        os.execv(sys.executable, [sys.executable, *sys.argv[1:]])  # but no child of it
    os._exit(0)
while True:  # the pane's own process stays, and reads nothing
    time.sleep(60)
"""


def test_an_agent_the_pane_did_not_start_gets_nothing_typed(
    server: libtmux.Server, room_home: Path, room: Room, deliverer: Deliverer, tmp_path: Path
) -> None:
    """The registered agent runs on the pane's terminal, in its foreground, and is not a
    shell, but the pane's process is not among its ancestors: it is not the pane's agent,
    and nothing is typed (only the lineage check tells this case apart)."""
    wrapper = tmp_path / "orphan.py"
    wrapper.write_text(ORPHAN)
    standin = agent_command(room_home, "frontend")
    env, _, argv = standin.partition(f" {sys.executable} ")
    session = server.new_session(
        session_name="ac-frontend", window_command=f"{env} {sys.executable} {wrapper} {argv}"
    )
    pane = session.active_window.active_pane
    assert pane is not None
    wait_for(lambda: "You are @frontend" in screen(pane))
    agent = room.store.holder("frontend")
    assert agent is not None
    assert agent["pane"] == pane.pane_id
    assert SystemProbe().is_alive(agent["pid"], agent["pid_start"])
    room.send("backend", "frontend", "not for a stranger's pane")
    wait_for(lambda: any(s["delivery"] for s in room.who() if s["name"] == "frontend"))
    note = next(s for s in room.who() if s["name"] == "frontend")["delivery"]
    assert note == "the pane does not run the registered agent"
    assert "PROMPT:" not in screen(pane)
    assert "new message" not in screen(pane)
