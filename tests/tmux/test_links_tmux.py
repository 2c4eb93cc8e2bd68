"""Links and timers in real tmux panes: stand-in agents fire the real hooks, and the
deliverer and the injector run as they do under ``agent-room watch``."""

from __future__ import annotations

import json
import shlex
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import libtmux
import pytest

from agent_room.adapters.processes import SystemProbe
from agent_room.adapters.tmux import Tmux
from agent_room.room.links import Links
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.workers.deliverer import Deliverer
from agent_room.workers.injector import Injector
from tests.conftest import Cli
from tests.poll import wait_for
from tests.tmux.conftest import agent_command

LONG = 60.0
"""Timeout for waits that span several turns of two agents."""


def screen(pane: libtmux.Pane) -> str:
    """Everything the pane showed, scrollback included, wrapped lines joined."""
    return "\n".join(pane.capture_pane(start="-", join_wrapped=True) or [])


@pytest.fixture
def room(room_home: Path) -> Iterator[Room]:
    opened = Room.open({"AGENT_ROOM_HOME": str(room_home)})
    yield opened
    opened.close()


@pytest.fixture
def workers(room_home: Path) -> Iterator[tuple[Deliverer, Injector]]:
    """The deliverer and the injector in background threads, each on its own connection."""
    env = {"AGENT_ROOM_HOME": str(room_home)}
    rooms = [Room.open(env), Room.open(env)]
    deliverer = Deliverer(rooms[0], Tmux(), SystemProbe(), receipt_timeout=1.0)
    injector = Injector(rooms[1], SystemProbe())
    stop = threading.Event()
    threads = [
        threading.Thread(target=worker.run, args=(stop,), daemon=True)
        for worker in (deliverer, injector)
    ]
    for thread in threads:
        thread.start()
    yield deliverer, injector
    stop.set()
    for thread in threads:
        thread.join(timeout=10)
    for opened in rooms:
        opened.close()


def start_agent(
    server: libtmux.Server,
    room_home: Path,
    name: str,
    *,
    nudge_reply: str | None = None,
    answers: tuple[str, ...] = (),
) -> libtmux.Pane:
    extra: tuple[str, ...] = ()
    if nudge_reply is not None:
        extra = ("--nudge-reply", shlex.quote(nudge_reply))
    for answer in answers:  # MARK=TEXT: TEXT answers what the room handed over with MARK
        extra += ("--answer", shlex.quote(answer))
    session = server.new_session(
        session_name=f"ac-{name}", window_command=agent_command(room_home, name, *extra)
    )
    pane = session.active_window.active_pane
    assert pane is not None
    wait_for(lambda: f"You are @{name}" in screen(pane))
    return pane


def link_messages(room: Room, sender: str | None = None) -> list[dict[str, Any]]:
    return [
        m
        for m in room.store.history(500)
        if m["kind"] == "link" and (sender is None or m["sender"] == sender)
    ]


def verdicts(room: Room, link_id: int, outcome: str) -> list[dict[str, Any]]:
    return [t for t in Links(room).store.link_turns(link_id) if t["outcome"] == outcome]


def session_of(room: Room, name: str) -> str:
    row = room.store.holder(name)
    assert row is not None
    return str(row["session_id"])


def open_link(cli: Cli, sender: str, recipient: str, text: str) -> int:
    result = cli("send", f"@{recipient}", text, "--link", name=sender)
    assert result.code == 0, result.err
    assert "link #" in result.err
    return int(result.err.split("link #")[1].split()[0])


def test_outputs_cross_both_ways_framed(
    server: libtmux.Server, room_home: Path, room: Room, cli: Cli, workers: object
) -> None:
    a = start_agent(
        server,
        room_home,
        "a",
        nudge_reply="ok",
        answers=("B-CONCLUSION=A-FINDING adapters are registered in one place",),
    )
    b = start_agent(
        server,
        room_home,
        "b",
        nudge_reply="ok",
        answers=(
            "idea X=B-CONCLUSION the adapter needs work",
            "A-FINDING=B-AGREED one registry, then",
        ),
    )
    link_id = open_link(cli, "a", "b", "what does idea X cost?")
    # B reads the question and the rules; its final output crosses to A, framed
    wait_for(lambda: "what does idea X cost?" in screen(b))
    assert "Never acknowledge before contributing" in screen(b)
    wait_for(lambda: "[From @b] B-CONCLUSION the adapter needs work" in screen(a), LONG)
    # A's answer crosses to B, B's answer to that back to A; A's "ok" does not
    wait_for(lambda: "[From @a] A-FINDING adapters are registered in one place" in screen(b), LONG)
    wait_for(lambda: len(link_messages(room, "b")) == 2, LONG)  # B's second answer crossed
    wait_for(lambda: verdicts(room, link_id, "ack"), LONG)  # A's "ok" did not cross
    # a person's turn answers no peer: it stays home
    a.send_keys("/say A-PERSON typed at the prompt", enter=True)
    wait_for(lambda: verdicts(room, link_id, "person"), LONG)
    bodies = [m["body"] for m in link_messages(room)]
    assert bodies == [
        "[From @b] B-CONCLUSION the adapter needs work",
        "[From @a] A-FINDING adapters are registered in one place",
        "[From @b] B-AGREED one registry, then",
    ]
    assert all(m["link_id"] == link_id for m in link_messages(room))
    link = Links(room).store.link(link_id)
    assert link is not None
    assert link["crossings"] == 3


def test_checkpoint_turn_never_crosses_and_spends_nothing(
    server: libtmux.Server, room_home: Path, room: Room, cli: Cli, workers: object
) -> None:
    a = start_agent(server, room_home, "a", nudge_reply="ok")
    b = start_agent(
        server, room_home, "b", nudge_reply="ok", answers=("REAL-Q=REAL-OUTPUT after it",)
    )
    link_id = open_link(cli, "a", "b", "keep me posted")
    wait_for(lambda: verdicts(room, link_id, "ack"), LONG)  # B absorbed it: nothing crossed
    b.send_keys("[agent-room checkpoint] anything worth saving?", enter=True)
    wait_for(lambda: verdicts(room, link_id, "checkpoint"), LONG)
    assert link_messages(room) == []
    assert "checkpoint" not in screen(a)
    link = Links(room).store.link(link_id)
    assert link is not None
    assert (link["state"], link["crossings"]) == ("open", 0)
    # the link is still open and its budget whole: the next real answer crosses
    open_link(cli, "a", "b", "and now? (REAL-Q)")
    wait_for(lambda: "[From @b] REAL-OUTPUT after it" in screen(a), LONG)
    assert [t["outcome"] for t in verdicts(room, link_id, "crossed")] == ["crossed"]
    assert Links(room).links()[0]["crossings_left"] == 7


def test_budget_closes_the_link_after_eight_crossings(
    server: libtmux.Server, room_home: Path, room: Room, cli: Cli, workers: object
) -> None:
    Links(room).configure(loop=(0, 60.0))  # loop breaker off: only the budget stops them
    a = start_agent(server, room_home, "a")  # both echo whatever they get: a runaway pair
    start_agent(server, room_home, "b")
    link_id = open_link(cli, "a", "b", "ping")

    def closed() -> bool:
        link = Links(room).store.link(link_id)
        return link is not None and link["state"] == "closed"

    wait_for(closed, 120)
    link = Links(room).store.link(link_id)
    assert link is not None
    assert (link["crossings"], link["close_reason"]) == (8, "turn budget spent")
    wait_for(lambda: "crossings are spent" in screen(a), LONG)
    notices = [
        m
        for m in room.store.history(500)
        if m["kind"] == "system" and "crossings are spent" in m["body"]
    ]
    assert sorted(m["recipient"] for m in notices) == ["a", "b"]
    assert [e.kind for e in audit_events(room) if e.kind == "link.closed"] == ["link.closed"]
    # the agents go on echoing their notices, but nothing crosses any more
    wait_for(lambda: settled(room), LONG)
    assert len(link_messages(room)) == 8


def settled(room: Room) -> bool:
    """Every agent idle and nothing left to deliver."""
    return all(s["state"] == "idle" and not room.store.queued(s["name"]) for s in room.who())


def test_loop_breaker_freezes_and_thaw_releases_what_was_held(
    server: libtmux.Server, room_home: Path, room: Room, cli: Cli, workers: object
) -> None:
    Links(room).configure(loop=(3, 300.0))
    start_agent(server, room_home, "a")
    start_agent(server, room_home, "b")
    link_id = open_link(cli, "a", "b", "ping")

    def state() -> str:
        link = Links(room).store.link(link_id)
        return str(link["state"]) if link else ""

    wait_for(lambda: state() == "frozen", LONG)
    listed = cli("links", "--json")
    [row] = [r for r in json.loads(listed.out) if r["id"] == link_id]
    assert (row["state"], row["crossings"], row["held"]) == ("frozen", 3, 1)
    who = cli("who")
    assert f"#{link_id} to @b frozen, no anchor!" in who.out
    assert any(e.kind == "link.frozen" for e in audit_events(room))
    assert len(link_messages(room)) == 4  # three crossed, the fourth held (not lost)
    assert [m["status"] for m in link_messages(room)][-1] == "held"
    refused = cli("link", "thaw", str(link_id), name="a")
    assert refused.code == 1
    assert "only the operator" in refused.err
    assert cli("link", "thaw", str(link_id)).code == 0
    wait_for(lambda: link_messages(room)[3]["status"] != "held", LONG)
    wait_for(lambda: state() == "frozen", LONG)  # the echoes go on: it trips again
    closed = cli("link", "close", str(link_id))
    assert closed.code == 0, closed.err
    assert state() == "closed"


def test_ending_b_severs_the_link(
    server: libtmux.Server, room_home: Path, room: Room, cli: Cli, workers: object
) -> None:
    assert cli("link", "settings", "--sever-grace", "1").code == 0
    a = start_agent(server, room_home, "a", nudge_reply="ok")
    b = start_agent(server, room_home, "b", nudge_reply="ok")
    link_id = open_link(cli, "a", "b", "hello")
    wait_for(lambda: verdicts(room, link_id, "ack"), LONG)
    b.send_keys("C-d", enter=False)  # end of input: SessionEnd

    def severed() -> dict[str, Any] | None:
        link = Links(room).store.link(link_id)
        return link if link and link["state"] == "closed" else None

    link = wait_for(severed, LONG)
    assert isinstance(link, dict)
    assert link["close_reason"] == "severed: the responder's session ended"
    wait_for(lambda: "is severed" in screen(a), LONG)
    again = cli("send", "@b", "still there?", "--close-link", name="a")
    assert again.code == 1
    assert "no open link" in again.err


def test_timers_fire_into_the_right_pane(
    server: libtmux.Server, room_home: Path, room: Room, cli: Cli
) -> None:
    a = start_agent(server, room_home, "a")
    b = start_agent(server, room_home, "b")
    with cli.watching():
        assert cli("timer", "anchor", "2s", "return to task 3", name="b").code == 0
        assert cli("timer", "check", "1s", "read @b's status", name="a").code == 0
        wait_for(lambda: "ANCHOR: return to task 3" in screen(b), 20)
        wait_for(lambda: "CHECK: read @b's status" in screen(a), 20)
        assert "ANCHOR:" not in screen(a)
        assert "CHECK:" not in screen(b)
        assert [t["state"] for t in Links(room).timers(pending_only=False)] == ["fired"] * 2
        assert cli("timers").err.strip() == "no timers"
