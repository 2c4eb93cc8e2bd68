"""The snapshot reader on the seeded room, and the sessions table's filter and sort."""

from __future__ import annotations

import json
import operator
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from rich.text import Text

from agent_room.core.enums import SessionState
from agent_room.core.snapshot import SessionRow
from agent_room.room.service import Room
from agent_room.room.snapshot import SnapshotReader
from agent_room.turn.room.registry import Registry
from agent_room.ui.columns import COLUMNS, CellContext, age, matches, short_path, visible
from tests.ui.seed import AliveProbe, FrozenClock, seed_room


def test_the_reader_builds_the_whole_picture(room_home: Path) -> None:
    room, clock = seed_room(room_home)
    snapshot = SnapshotReader(room).read()
    assert snapshot.taken_at == clock.now
    assert {s.name: s.state for s in snapshot.sessions} == {
        "backend": "busy",
        "frontend": "idle",
        "api": "waiting",
        "reviewer": "idle",
        "docs": "ended",
        "ops": "idle",
    }
    docs = snapshot.session("docs")
    assert docs is not None
    assert docs.delivery == "1 failed"
    roots = {r.label: r for r in snapshot.tree}
    assert [c.label for c in roots["backend"].children] == ["api", "Explore a1b2c3d4"]
    assert roots["backend"].children[1].kind == "subagent"
    assert [(h.sender, h.recipient, h.cycle is not None) for h in snapshot.handovers] == [
        ("frontend", "api", False),
        ("api", "backend", True),
    ]
    assert snapshot.handovers[1].cycle == ("api", "backend", "frontend", "api")
    kinds = [e.kind for e in snapshot.flow]
    assert kinds.count("requested") == 3
    assert "failed" in kinds
    assert "read" in kinds
    assert (snapshot.traffic[0].sender, snapshot.traffic[0].recipient) == ("backend", "frontend")
    assert snapshot.traffic[0].count == 3  # a chat, a handover, the link's opening words
    backend, frontend = snapshot.session("backend"), snapshot.session("frontend")
    assert backend is not None
    assert frontend is not None
    assert (backend.links, backend.unanchored) == ("#1 to @frontend", False)  # has an anchor
    assert (frontend.links, frontend.unanchored) == ("#1 from @backend, no anchor!", True)
    opened = [e for e in snapshot.flow if e.kind == "opened"]
    assert [(e.message_kind, e.sender, e.recipient, e.summary) for e in opened] == [
        ("link", "backend", "frontend", "link #1")
    ]
    room.close()


def test_what_did_not_change_keeps_its_object_and_what_changed_is_read_anew(
    room_home: Path,
) -> None:
    """A re-read hands the console the same session, flow event and tree objects where
    nothing they show changed (it compares them at a glance); a session whose state, unread
    count or note moved, and a new event, are new objects showing the change."""
    room, clock = seed_room(room_home)
    reader = SnapshotReader(room)
    first = reader.read()
    again = reader.read()
    assert all(map(operator.is_, again.sessions, first.sessions))
    assert all(map(operator.is_, again.flow, first.flow))
    assert again.tree is first.tree
    Registry(room, AliveProbe()).set_state("sess-frontend", SessionState.BUSY)
    room.send("backend", "ops", "Deploy window at five.")
    room.store.set_note("reviewer", "waiting for a pane", at=clock.now)
    moved = reader.read()
    changed = {
        s.name for s, old in zip(moved.sessions, first.sessions, strict=True) if s is not old
    }
    assert changed == {"frontend", "ops", "reviewer", "backend"} - {"backend"}
    assert moved.session("frontend").state == "busy"  # type: ignore[union-attr]
    assert moved.session("ops").unread == first.session("ops").unread + 1  # type: ignore[union-attr]
    assert moved.session("reviewer").note == "waiting for a pane"  # type: ignore[union-attr]
    assert moved.flow[-1].summary == "Deploy window at five."
    assert len(moved.flow) == len(first.flow) + 1
    assert all(map(operator.is_, moved.flow, first.flow))
    assert moved.tree is not first.tree  # a session's state shows in the tree
    room.close()


def test_an_unchanged_room_reads_the_same_and_traffic_adds_up(room_home: Path) -> None:
    room, clock = seed_room(room_home)
    reader = SnapshotReader(room)
    first = reader.read()
    clock.advance(5)
    again = reader.read()
    assert again.same_content(first)
    assert again.taken_at != first.taken_at
    room.send("ops", "docs", "ping")
    third = reader.read()
    assert not third.same_content(again)
    assert ("ops", "docs", 1) in [(e.sender, e.recipient, e.count) for e in third.traffic]
    room.close()


class _DeadProbe:
    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        return False


def test_the_reader_keeps_live_agents_and_marks_dead_ones_ended(room_home: Path) -> None:
    room, _clock = seed_room(room_home)
    seeded = {s.name: s.state for s in SnapshotReader(room).read().sessions}
    live = SnapshotReader(room, registry=Registry(room, AliveProbe())).read()
    assert {s.name: s.state for s in live.sessions} == seeded  # nothing alive was ended
    assert {s.state for s in live.sessions if s.pid is not None} > {"busy", "idle", "waiting"}
    dead = SnapshotReader(room, registry=Registry(room, _DeadProbe())).read()
    assert {s.state for s in dead.sessions if s.pid is not None} == {"ended"}
    ops = dead.session("ops")
    assert ops is not None
    assert (ops.pid, ops.state) == (None, "idle")  # joined by hand: no process to check
    room.close()


def _row(name: str, state: str, started: float, unread: int = 0) -> SessionRow:
    return SessionRow(
        name=name,
        session_id=None,
        agent="claude",
        state=state,
        cwd=f"/srv/{name}",
        pane=None,
        tmux_socket=None,
        pid=None,
        started_at=started,
        unread=unread,
    )


ROWS = [_row("web", "idle", 1), _row("api", "busy", 2, 3), _row("db", "waiting", 3, 1)]


def test_filter_matches_every_word_anywhere() -> None:
    assert [r.name for r in visible(ROWS, query="srv BUSY")] == ["api"]
    assert [r.name for r in visible(ROWS, query="  ")] == ["web", "api", "db"]
    assert not matches(ROWS[0], "nothing")


def test_sort_by_each_column() -> None:
    assert [r.name for r in visible(ROWS, sort="name")] == ["api", "db", "web"]
    assert [r.name for r in visible(ROWS, sort="state")] == ["db", "api", "web"]
    assert [r.name for r in visible(ROWS, sort="unread")] == ["api", "db", "web"]
    assert [r.name for r in visible(ROWS, sort="age", reverse=True)] == ["web", "api", "db"]
    assert [c.key for c in COLUMNS][:3] == ["name", "agent", "state"]


def test_every_cell_is_text_shown_as_written() -> None:
    """A ``[`` in a path or name is text, never a style the table would parse."""
    row = replace(_row("web", "idle", 1), cwd="/srv/[bold]x[/]", pane="%[1]")
    ctx = CellContext(now=10.0, colours={})
    cells = {c.key: c.cell(row, ctx) for c in COLUMNS}
    assert all(isinstance(cell, Text) for cell in cells.values())
    assert (cells["cwd"].plain, cells["pane"].plain) == ("/srv/[bold]x[/]", "%[1]")


def test_small_formats() -> None:
    assert [age(s) for s in (5, 75, 7200, 200000, -3)] == ["<1m", "1m", "2h", "2d", "<1m"]
    assert short_path("/a/b") == "/a/b"
    assert short_path("/" + "x" * 40, width=10) == "…" + "x" * 9
    assert short_path(None) == ""


def test_frozen_clock_moves_only_when_told() -> None:
    clock = FrozenClock(10.0)
    assert clock() == 10.0
    assert clock.advance(2) == 12.0


def test_room_fixture_is_usable(room: Room) -> None:
    assert SnapshotReader(room).read().sessions == ()


def test_a_name_joined_without_an_agent_is_not_shown_as_claude(room: Room) -> None:
    """``join NAME`` alone registers a name, no agent: neither the console nor ``who``
    call it ``claude``; a pane joined without ``--agent`` still is one."""
    env = {**os.environ, "AGENT_ROOM_HOME": str(room.home)}
    for argv in (["join", "alice"], ["join", "bot", "--pane", "%7"]):
        subprocess.run([sys.executable, "-m", "agent_room", *argv], env=env, check=True)
    who = subprocess.run(
        [sys.executable, "-m", "agent_room", "who", "--json"], env=env, check=True,
        capture_output=True, text=True,
    )  # fmt: skip
    assert {r["name"]: r["agent"] for r in json.loads(who.stdout)} == {"alice": "", "bot": "claude"}
    snapshot = SnapshotReader(room).read()
    ctx = CellContext(now=10.0, colours={})
    agent = next(c for c in COLUMNS if c.key == "agent")
    shown = {r.name: agent.cell(r, ctx).plain for r in snapshot.sessions}
    assert shown == {"alice": "-", "bot": "claude"}


def test_the_traffic_window_moves_on_as_counting_it_whole_would(room_home: Path) -> None:
    """The reader adds the messages that came in and takes off those that left the
    window; the counts are those of the whole window, counted again at each read."""
    room, _clock = seed_room(room_home)
    reader = SnapshotReader(room, traffic_window=7)
    names = ["backend", "frontend", "api", "reviewer"]
    for n in range(30):
        for k in range(1 + n % 3):  # one to three messages between two reads
            room.send(names[(n + k) % 4], names[(n + 2 * k + 1) % 4], f"m{n}.{k}")
        moved = reader.read().traffic
        whole = SnapshotReader(room, traffic_window=7).read().traffic
        assert moved == whole
        assert sum(e.count for e in moved) <= 7
