"""The console's code: the Branch column, the changes view (``d``) with a file's diff, a
handover's code in the preview, overlaps flagged; re-read when a turn ends, not polled.

Flow tests run the real console against a real room and real git worktrees; the
pictures get one fixed ``CodeSnapshot`` so they are the same on every machine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from agent_room.adapters.git import GitCli
from agent_room.core.overlaps import CodeSnapshot, Overlap
from agent_room.core.snapshot import RoomSnapshot
from agent_room.core.worktrees import (
    BranchState,
    Changes,
    CodePreview,
    CodeRef,
    FileChange,
    MergeCheck,
)
from agent_room.room.enter import Where
from agent_room.room.service import Room
from agent_room.room.worktrees import Worktrees
from agent_room.ui.app import RoomConsole, make_app
from agent_room.ui.messages import CodeReady
from agent_room.ui.screens.changes import ChangesScreen
from agent_room.ui.widgets.handovers import HandoverPreview
from agent_room.ui.widgets.sessions import SessionsTable
from tests.fakes import FakeMux
from tests.gitrepo import agents_in_worktrees, commit, make_repo
from tests.ui.conftest import live_settings, settle_queue, still_snapshot, until
from tests.ui.seed import AliveProbe, FrozenClock

SnapCompare = Callable[..., bool]
pytestmark = pytest.mark.anyio


def _live_console(room_home: Path) -> RoomConsole:
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    # the room's file watch wakes the reader when a hook moves a session (no polling)
    settings = live_settings(room_home, watch=True)
    return make_app(settings, mux=FakeMux(), probe=AliveProbe(), where=where)


async def test_branch_column_and_changes_follow_the_turns(
    room: Room, room_home: Path, tmp_path: Path
) -> None:
    a, b = agents_in_worktrees(room, make_repo(tmp_path / "repo"), "alpha", "beta")
    commit(a, "alpha's", **{"f.txt": "A\nb\nc\n"})
    (a / "new.txt").write_text("1\n2\n")
    readings: list[CodeSnapshot] = []

    def hook(message: Message) -> None:
        if isinstance(message, CodeReady):
            readings.append(message.code)

    app = _live_console(room_home)
    async with app.run_test(size=(140, 40), message_hook=hook) as pilot:
        table = app.main.query_one("#sessions", SessionsTable)
        await until(pilot, lambda: [r.branch for r in table.shown] == ["alpha ↑1 ●1", "beta"])
        assert "branch" in table.columns

        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert isinstance(screen, ChangesScreen)
        assert screen.rows == [
            ("alpha", None),
            ("alpha", "f.txt"),
            ("alpha", "new.txt"),
            ("beta", None),
        ]
        await until(pilot, lambda: "-a\n+A" in screen.patch)  # f.txt, the first file
        files = screen.query_one("#changed-files", DataTable)
        files.move_cursor(row=2)
        await until(pilot, lambda: "+1\n+2" in screen.patch)

        read = len(readings)
        app.action_reread()  # a room change that moves no session: git is not asked
        await pilot.pause(0.3)
        assert len(readings) == read

        commit(b, "beta's", **{"f.txt": "B\nb\nc\n"})
        room.store.set_state("s-beta", "busy", at=room.clock())
        room.store.set_state("s-beta", "idle", at=room.clock())  # beta's turn ended (Stop)
        await until(pilot, lambda: ("beta", "f.txt") in screen.rows)
        overlaps = screen.query_one("#overlaps", Static)
        assert "@alpha and @beta change the same lines of f.txt" in str(overlaps.render())
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ChangesScreen))
        rows = {r.name: r for r in table.shown}
        assert rows["alpha"].delivery == "⚠ f.txt conflicts with @beta"


async def test_a_handovers_code_is_previewed_and_approved_with_instructions(
    room: Room, room_home: Path, tmp_path: Path
) -> None:
    a, _b = agents_in_worktrees(room, make_repo(tmp_path / "repo"), "alpha", "beta")
    commit(a, "alpha's", **{"g.txt": "g\n"})
    carried = Worktrees(room, GitCli()).code_of("alpha")
    hid = room.send_handover("alpha", "beta", body="take g", code=carried)
    app = _live_console(room_home)
    async with app.run_test(size=(140, 40)) as pilot:
        preview = app.main.query_one("#preview", HandoverPreview)
        code = preview.query_one("#handover-code", Static)
        await until(pilot, lambda: "merges cleanly into beta" in str(code.render()))
        assert "g.txt +1 -0" in str(code.render())
        await pilot.press("a")  # approved in the console: the recipient is told how
        message = room.store.message
        await until(pilot, lambda: "git merge" in str((message(hid) or {})["body"]))
    body = str((room.store.message(hid) or {})["body"])
    assert f"carries @alpha's code: commit {carried.commit if carried else ''}" in body
    assert "It merges cleanly into beta. Take it with: git merge" in body


# -- pictures ---------------------------------------------------------------------------------


def _code(snapshot: RoomSnapshot) -> CodeSnapshot:
    """Branches for two seeded agents, one overlap, and the last handover's code."""
    api = Changes(
        "api",
        "/srv/shop/.worktrees/api",
        "main",
        (FileChange("api/orders.py", 12, 3), FileChange("db/0042_total.sql", 8, 0, "?")),
        worktree=True,
        state=BranchState("api", "a" * 40, ahead=2, dirty=1),
    )
    backend = Changes(
        "backend",
        "/srv/shop/.worktrees/backend",
        "main",
        (FileChange("api/orders.py", 4, 4),),
        worktree=True,
        state=BranchState("backend", "b" * 40, ahead=1, behind=3),
    )
    overlap = Overlap("api", "backend", ("api/orders.py",), "conflict")
    last = snapshot.handovers[-1].id
    preview = CodePreview(
        CodeRef("api", "a" * 40, "/srv/shop/.worktrees/api", uncommitted=1),
        "backend",
        api.files[:1],
        MergeCheck(clean=False, conflicts=("api/orders.py",)),
    )
    return CodeSnapshot((api, backend), (overlap,), ((last, preview),))


def _still(room: Room, clock: FrozenClock) -> RoomConsole:
    settings, snapshot = still_snapshot(room)
    where = Where(socket=None, pane=None, session_id=None, actor="operator")
    return make_app(
        settings,
        mux=FakeMux(),
        probe=AliveProbe(),
        where=where,
        clock=clock,
        snapshot=snapshot,
        code=_code(snapshot),
    )


def test_main_screen_with_branches_and_a_handovers_code(
    snap_compare: SnapCompare, seeded: tuple[Room, FrozenClock]
) -> None:
    """160x48: the seeded room with a Branch column (@api "api ↑2 ●1" in the warning
    colour, @backend "backend ↑1 ↓3", "·" for the others), the same after "⎇" on their
    nodes of the tree, "⚠ orders.py conflicts with
    @backend" in @api's delivery column, and the highlighted handover #8's preview led by
    its code in red: "code: api @ aaaaaaaaaa; 1 file +12 -3; CONFLICTS with backend in
    api/orders.py; 1 uncommitted file left out" over "api/orders.py +12 -3"."""
    room, clock = seeded
    assert snap_compare(_still(room, clock), terminal_size=(160, 48), run_before=settle_queue)


def test_changes_view(snap_compare: SnapCompare, seeded: tuple[Room, FrozenClock]) -> None:
    """140x36: the changes view. At the top, in the warning colour, "⚠ @api and @backend
    change the same lines of api/orders.py ...". Left, @api "api ↑2 ●1" (+20 -3) with
    "M api/orders.py +12 -3" (highlighted) and "? db/0042_total.sql +8"; @backend
    "backend ↑1 ↓3" with its file. Right, titled "@api · api/orders.py", the patch in
    diff colours (the hunk header, one line removed in red, two added in green)."""
    room, clock = seeded

    async def show(pilot: Pilot[int]) -> None:
        app = pilot.app
        assert isinstance(app, RoomConsole)
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ChangesScreen))
        screen = app.screen
        assert isinstance(screen, ChangesScreen)
        await until(pilot, lambda: screen.showing == ("api", "api/orders.py"))
        patch = (
            "diff --git a/api/orders.py b/api/orders.py\n--- a/api/orders.py\n"
            "+++ b/api/orders.py\n@@ -10,3 +10,4 @@ def orders(cursor):\n"
            "     rows = page(cursor)\n-    return rows\n+    total = count_orders()\n"
            "+    return rows, total\n"
        )
        screen.post_message(ChangesScreen.DiffReady("api", "api/orders.py", patch))
        await pilot.pause()

    assert snap_compare(_still(room, clock), terminal_size=(140, 36), run_before=show)
