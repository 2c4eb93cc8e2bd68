"""``Navigator``: finding, waiting for, entering and leaving sessions on a real room.

tmux is a recording fake here (the real switch is in tests/ui/test_console_tmux.py and
tests/cli/test_enter_cli.py); the store, the registry and the audit log are real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.adapters.git import GitCli
from agent_room.core.enter import Move
from agent_room.core.enums import SessionState
from agent_room.room.enter import Navigator, Where
from agent_room.room.service import Room
from agent_room.room.worktrees import Worktrees
from agent_room.turn.core.errors import BadInput, NotFound, Refused
from agent_room.turn.room.registry import Registry, SessionFacts
from tests.fakes import FakeMux
from tests.gitrepo import make_repo
from tests.ui.conftest import SOCKET
from tests.ui.seed import AliveProbe, FrozenClock, _facts, seed_room

CONSOLE = Where(socket=SOCKET, pane="%0", session_id=None, actor="operator")


@pytest.fixture
def nav(room_home: Path) -> tuple[Navigator, FakeMux, FrozenClock]:
    room, clock = seed_room(room_home)
    mux = FakeMux()

    def sleep(seconds: float) -> None:
        clock.advance(seconds)

    return Navigator(room, mux, AliveProbe(), sleep=sleep, monotonic=clock), mux, clock


def test_enter_by_name_or_session_id(nav: tuple[Navigator, FakeMux, FrozenClock]) -> None:
    navigator, mux, _clock = nav
    by_name = navigator.find("@frontend", wait=0)
    assert navigator.find("sess-frontend", wait=0) == by_name
    plan = navigator.plan(by_name, CONSOLE)
    assert plan.move is Move.SWITCH
    navigator.carry_out(plan, CONSOLE)
    assert mux.calls == [("switch_client", SOCKET, "%2")]


def test_a_fresh_session_is_waited_for(
    nav: tuple[Navigator, FakeMux, FrozenClock], room_home: Path
) -> None:
    navigator, _mux, clock = nav
    registry = Registry(navigator.room, AliveProbe())
    told: list[bool] = []
    polls = []

    def sleep(seconds: float) -> None:
        polls.append(seconds)
        clock.advance(seconds)
        if len(polls) == 3:  # SessionStart arrives while enter waits
            registry.register(_facts("fresh", "%8"))

    navigator.sleep = sleep
    row = navigator.find("fresh", on_wait=lambda: told.append(True))
    assert row["session_id"] == "sess-fresh"
    assert told == [True]
    assert len(polls) == 3


def test_waiting_gives_up_after_the_limit(nav: tuple[Navigator, FakeMux, FrozenClock]) -> None:
    navigator, _mux, clock = nav
    start = clock.now
    with pytest.raises(NotFound, match="waited 10 s"):
        navigator.find("nobody", wait=10)
    assert clock.now - start >= 10


def test_bad_names_are_bad_input(nav: tuple[Navigator, FakeMux, FrozenClock]) -> None:
    with pytest.raises(BadInput):
        nav[0].find("  ", wait=0)


def test_resume_opens_a_window_in_the_cwd_then_switches(
    nav: tuple[Navigator, FakeMux, FrozenClock],
) -> None:
    navigator, mux, _clock = nav
    plan = navigator.plan(navigator.find("docs", wait=0), CONSOLE)
    assert plan.move is Move.RESUME
    assert navigator.carry_out(plan, CONSOLE) == "%77"
    (opened, switched) = mux.calls
    assert opened[:3] == ("open_window", SOCKET, "/srv/shop/docs")
    assert opened[4:] == ("docs-resumed", True)
    argv = tuple(str(a) for a in opened[3])  # type: ignore[attr-defined]
    assert argv[argv.index("claude") :] == ("claude", "--resume", "sess-docs")
    assert switched == ("switch_client", SOCKET, "%77")


def test_a_refusal_is_raised_by_carry_out(nav: tuple[Navigator, FakeMux, FrozenClock]) -> None:
    navigator, mux, _clock = nav
    mux.panes_alive = False  # backend's pane is gone but its process runs
    plan = navigator.plan(navigator.find("backend", wait=0), CONSOLE)
    assert plan.move is Move.REFUSE
    with pytest.raises(Refused, match="live elsewhere"):
        navigator.carry_out(plan, CONSOLE)


def test_exit_goes_back_one_jump_or_to_the_root(
    nav: tuple[Navigator, FakeMux, FrozenClock],
) -> None:
    navigator, _mux, clock = nav
    # the console enters backend; backend enters frontend; frontend enters reviewer
    hops = [
        (CONSOLE, "backend"),
        (Where(socket=SOCKET, pane="%1", session_id="sess-backend", actor="backend"), "frontend"),
        (Where(socket=SOCKET, pane="%2", session_id="sess-frontend", actor="frontend"), "reviewer"),
    ]
    for where, name in hops:
        clock.advance(1)
        navigator.remember(navigator.plan(navigator.find(name, wait=0), where), where)
    inside = Where(socket=SOCKET, pane="%4", session_id="sess-reviewer", actor="reviewer")
    current = navigator.current_session(inside, None)
    back = navigator.exit_plan(current, inside, root=False)
    assert (back.move, back.target.name, back.target.pane) == (Move.SWITCH, "frontend", "%2")
    root = navigator.exit_plan(current, inside, root=True)
    assert (root.move, root.target.pane) == (Move.SWITCH, "%0")  # the console's pane


def test_exit_without_a_jump_goes_up_the_tree(
    nav: tuple[Navigator, FakeMux, FrozenClock],
) -> None:
    navigator, _mux, _clock = nav
    inside = Where(socket=SOCKET, pane="%4", session_id=None, actor="reviewer")
    current = navigator.current_session(inside, None)  # found by its pane
    assert current["name"] == "reviewer"
    assert navigator.exit_plan(current, inside, root=False).target.name == "api"
    assert navigator.exit_plan(current, inside, root=True).target.name == "backend"
    top = navigator.current_session(inside, None) | {"parent": None, "session_id": "x"}
    with pytest.raises(NotFound, match="no parent session"):
        navigator.exit_plan(top, inside, root=False)


def test_exit_outside_any_agent_is_bad_input(room: Room) -> None:
    navigator = Navigator(room, FakeMux(), AliveProbe())
    with pytest.raises(BadInput, match="which agent session"):
        navigator.current_session(CONSOLE, None)


def test_an_ended_session_resumes_only_with_its_transcript(
    nav: tuple[Navigator, FakeMux, FrozenClock], tmp_path: Path
) -> None:
    navigator, mux, _clock = nav
    registry = Registry(navigator.room, AliveProbe())
    transcript = tmp_path / "sess-brief.jsonl"
    registry.register(_facts("brief", None, transcript=str(transcript)))
    registry.set_state("sess-brief", SessionState.ENDED)
    plan = navigator.plan(navigator.find("brief", wait=0), CONSOLE)
    assert plan.move is Move.REFUSE
    with pytest.raises(Refused, match="no conversation to resume"):
        navigator.carry_out(plan, CONSOLE)
    assert mux.calls == []
    transcript.write_text('{"type": "user"}\n')  # after a first turn
    assert navigator.plan(navigator.find("brief", wait=0), CONSOLE).move is Move.RESUME


def test_exit_root_walks_back_through_jumps_made_from_plain_terminals(
    nav: tuple[Navigator, FakeMux, FrozenClock],
) -> None:
    """The jumps were made inside agents' panes by a client that did not say its session
    (no CLAUDE_CODE_SESSION_ID): each hop is found by the pane's session."""
    navigator, _mux, clock = nav
    hops = [
        (CONSOLE, "backend"),
        (Where(socket=SOCKET, pane="%1", session_id=None, actor="backend"), "frontend"),
        (Where(socket=SOCKET, pane="%2", session_id=None, actor="frontend"), "reviewer"),
    ]
    for where, name in hops:
        clock.advance(1)
        navigator.remember(navigator.plan(navigator.find(name, wait=0), where), where)
    inside = Where(socket=SOCKET, pane="%4", session_id=None, actor="reviewer")
    current = navigator.current_session(inside, None)
    back = navigator.exit_plan(current, inside, root=False)
    assert (back.target.label, back.target.pane) == ("@frontend", "%2")
    root = navigator.exit_plan(current, inside, root=True)
    assert (root.move, root.target.label) == (Move.SWITCH, "pane %0")


def test_exit_root_ends_at_the_oldest_hop_still_there(
    nav: tuple[Navigator, FakeMux, FrozenClock],
) -> None:
    """The console the first jump came from is closed: root is the first session."""
    navigator, mux, clock = nav
    for where, name in (
        (CONSOLE, "backend"),
        (Where(socket=SOCKET, pane="%1", session_id="sess-backend", actor="backend"), "api"),
    ):
        clock.advance(1)
        navigator.remember(navigator.plan(navigator.find(name, wait=0), where), where)
    inside = Where(socket=SOCKET, pane="%3", session_id="sess-api", actor="api")
    alive = mux.pane_exists
    mux.pane_exists = lambda socket, pane: pane != "%0" and alive(socket, pane)  # type: ignore[method-assign]
    root = navigator.exit_plan(navigator.current_session(inside, None), inside, root=True)
    assert root.target.label == "@backend"


def test_entering_tells_the_parent_and_warns_when_its_process_is_gone(
    nav: tuple[Navigator, FakeMux, FrozenClock],
) -> None:
    navigator, _mux, _clock = nav
    registry = Registry(navigator.room, AliveProbe())
    plan = navigator.plan(navigator.find("api", wait=0), CONSOLE)
    assert plan.warnings == ()
    assert plan.target.parent_name == "backend"
    lead = _facts("lead", "%9")
    registry.register(  # a parent whose process died without a SessionEnd
        SessionFacts(**{k: getattr(lead, k) for k in SessionFacts.__slots__} | {"pid": 999})
    )
    registry.register(_facts("worker", "%10", parent="lead"))
    plan = navigator.plan(navigator.find("worker", wait=0), CONSOLE)
    assert plan.warnings == ("parent process 999 is no longer running (@lead, session sess-lead)",)


def test_an_agent_in_a_worktree_resumes_in_its_worktree(
    nav: tuple[Navigator, FakeMux, FrozenClock], tmp_path: Path
) -> None:
    navigator, mux, _clock = nav
    repo = make_repo(tmp_path / "repo")
    worktree, _ = Worktrees(navigator.room, GitCli()).make("wt", str(repo), None)
    transcript = tmp_path / "sess-wt.jsonl"
    transcript.write_text('{"type": "user"}\n')
    registry = Registry(navigator.room, AliveProbe())
    facts = _facts("wt", None, transcript=str(transcript))
    fields = {name: getattr(facts, name) for name in SessionFacts.__slots__}
    registry.register(SessionFacts(**{**fields, "cwd": worktree.path}))  # its hooks' cwd
    registry.set_state("sess-wt", SessionState.ENDED)
    plan = navigator.plan(navigator.find("wt", wait=0), CONSOLE)
    navigator.carry_out(plan, CONSOLE)
    assert mux.calls[0][:3] == ("open_window", SOCKET, worktree.path)
