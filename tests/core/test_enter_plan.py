"""The enter / exit decision of seed 003: switch, attach, resume or refuse."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_room.core.enter import Entry, Move, Target, exit_chain, parent_note, plan_enter

SOCKET = "/tmp/tmux-1000/default"
LIVE = Target(
    name="backend",
    session_id="s-backend",
    agent="claude",
    state="idle",
    pane="%3",
    socket=SOCKET,
    cwd="/srv/backend",
    parent="s-root",
    process_alive=True,
    pane_alive=True,
)


def test_a_live_pane_on_our_server_is_switched_to() -> None:
    plan = plan_enter(LIVE, inside_tmux=SOCKET)
    assert plan.move is Move.SWITCH
    assert plan.warnings == ()


def test_outside_tmux_or_on_another_server_it_attaches() -> None:
    assert plan_enter(LIVE, inside_tmux=None).move is Move.ATTACH
    assert plan_enter(LIVE, inside_tmux="/tmp/other").move is Move.ATTACH


@pytest.mark.parametrize("state", ["busy", "waiting"])
def test_a_busy_or_waiting_agent_is_still_entered(state: str) -> None:
    assert plan_enter(replace(LIVE, state=state), inside_tmux=SOCKET).move is Move.SWITCH


def test_an_ended_session_is_resumed_with_a_warning() -> None:
    ended = replace(LIVE, state="ended", process_alive=False, pane_alive=False)
    plan = plan_enter(ended, inside_tmux=SOCKET, claude="/opt/claude")
    assert plan.move is Move.RESUME
    assert plan.needs_confirm
    assert plan.argv == ("/opt/claude", "--resume", "s-backend")
    # seed 003's wording for an agent that already finished
    assert "@backend already ended - entering read-only session s-backend" in plan.warnings


def test_a_session_live_elsewhere_is_refused_unless_forced() -> None:
    elsewhere = replace(LIVE, pane=None, pane_alive=False)
    refused = plan_enter(elsewhere, inside_tmux=SOCKET)
    assert refused.move is Move.REFUSE
    assert "live elsewhere" in refused.reason
    assert "--force" in refused.reason
    forced = plan_enter(elsewhere, inside_tmux=SOCKET, force=True)
    assert forced.move is Move.RESUME
    assert any("still live" in w for w in forced.warnings)


def test_a_dead_pane_of_a_live_process_counts_as_elsewhere() -> None:
    gone = replace(LIVE, pane_alive=False)
    assert plan_enter(gone, inside_tmux=SOCKET).move is Move.REFUSE


def test_unknown_parent_warns() -> None:
    plan = plan_enter(replace(LIVE, parent=None), inside_tmux=SOCKET)
    assert any("no known parent" in w for w in plan.warnings)


def test_without_session_id_nothing_resumes() -> None:
    joined = replace(LIVE, session_id=None, state="ended", process_alive=False)
    assert plan_enter(joined, inside_tmux=SOCKET).move is Move.REFUSE


def test_claude_codex_and_gemini_sessions_resume_each_with_its_command() -> None:
    other = replace(LIVE, agent="command", state="ended", process_alive=False)
    plan = plan_enter(other, inside_tmux=SOCKET)
    assert plan.move is Move.REFUSE
    assert "only claude, codex and gemini sessions resume" in plan.reason
    codex = plan_enter(replace(other, agent="codex"), inside_tmux=SOCKET)
    assert codex.argv == ("codex", "resume", "s-backend")
    gemini = plan_enter(replace(other, agent="gemini"), inside_tmux=SOCKET)
    assert gemini.argv == ("gemini", "--resume", "s-backend")


def test_exit_chain_one_step_or_to_the_root() -> None:
    entries = [  # newest first
        Entry("c", "b", "%2", SOCKET),
        Entry("b", "a", "%1", SOCKET),
        Entry("a", None, "%0", SOCKET),
    ]
    assert [e.to_session for e in exit_chain(entries, "c", root=False)] == ["c"]
    assert [e.from_session for e in exit_chain(entries, "c", root=True)] == ["b", "a", None]
    assert exit_chain(entries, "z", root=True) == []


def test_exit_chain_stops_on_a_loop() -> None:
    entries = [Entry("a", "b", None, None), Entry("b", "a", None, None)]
    assert len(exit_chain(entries, "a", root=True)) == 2


def test_a_session_without_its_transcript_is_not_resumed() -> None:
    """Claude Code writes the transcript with the first turn: ``claude --resume`` of a
    session that ended before one finds no conversation, so enter says so instead."""
    never_turned = replace(
        LIVE, state="ended", process_alive=False, pane_alive=False, transcript_missing=True
    )
    plan = plan_enter(never_turned, inside_tmux=SOCKET)
    assert plan.move is Move.REFUSE
    assert "no conversation to resume" in plan.reason
    live = replace(LIVE, transcript_missing=True)  # a live pane is entered all the same
    assert plan_enter(live, inside_tmux=SOCKET).move is Move.SWITCH


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_a_session_that_never_had_a_turn_is_not_resumed(agent: str) -> None:
    """A transcript of bookkeeping only (or none named) is no conversation either."""
    never = replace(
        LIVE, agent=agent, state="ended", process_alive=False, pane_alive=False,
        no_conversation=True,
    )  # fmt: skip
    plan = plan_enter(never, inside_tmux=SOCKET)
    assert plan.move is Move.REFUSE
    assert plan.reason == (
        f"@{LIVE.name} has no conversation to resume: it ended before its first turn,"
        f" and {agent} cannot resume a session that never had one"
    )
    assert plan_enter(replace(never, no_conversation=False), inside_tmux=SOCKET).move is (
        Move.RESUME
    )


def test_a_session_that_never_had_a_turn_is_told_so_whether_or_not_its_file_is_there() -> None:
    """A client that writes its transcript only with the first turn (Claude Code
    2.1.337) leaves no file: the cause is still that the session never had a turn."""
    never = replace(
        LIVE, state="ended", process_alive=False, pane_alive=False,
        no_conversation=True, transcript_missing=True,
    )  # fmt: skip
    plan = plan_enter(never, inside_tmux=SOCKET)
    assert plan.move is Move.REFUSE
    assert plan.reason.startswith(
        f"@{LIVE.name} has no conversation to resume: it ended before its first turn"
    )


def test_a_parent_whose_process_is_gone_is_warned_of() -> None:
    """Seed 003: a parent that no longer runs cannot be returned to as it was."""
    stale = replace(LIVE, parent_name="root", parent_pid=4242, parent_alive=False)
    plan = plan_enter(stale, inside_tmux=SOCKET)
    assert plan.move is Move.SWITCH
    assert plan.warnings == ("parent process 4242 is no longer running (@root, session s-root)",)
    running = replace(stale, parent_alive=True)
    assert plan_enter(running, inside_tmux=SOCKET).warnings == ()


def test_the_parent_session_and_the_way_back_are_told() -> None:
    assert parent_note(replace(LIVE, parent_name="root")) == (
        "parent session: s-root (@root); return to it with: agent-room enter s-root"
    )
    assert parent_note(replace(LIVE, parent=None)) is None


def test_a_target_is_an_agent_or_a_plain_pane() -> None:
    assert LIVE.label == "@backend"
    assert replace(LIVE, name="", session_id=None, pane="%0").label == "pane %0"


def test_exit_chain_finds_the_session_of_a_pane_jumped_from() -> None:
    """Jumps made from a terminal that did not know its session (no
    CLAUDE_CODE_SESSION_ID) are walked through by the pane's session."""
    entries = [Entry("c", None, "%2", SOCKET), Entry("b", None, "%1", SOCKET)]
    entries.append(Entry("a", None, "%0", SOCKET))  # the console: no session holds %0
    panes = {"%2": "b", "%1": "a"}
    chain = exit_chain(entries, "c", root=True, pane_sessions=panes)
    assert [e.from_session for e in chain] == ["b", "a", None]
    assert chain[-1].from_pane == "%0"
    assert [e.from_session for e in exit_chain(entries, "c", root=True)] == [None]


def test_exit_chain_walks_back_in_time_over_every_hop() -> None:
    """a entered twice: the root is where the first jump came from, not a loop."""
    entries = [  # newest first: %0 -> a -> b -> a -> c
        Entry("c", "a", None, None),
        Entry("a", "b", None, None),
        Entry("b", "a", None, None),
        Entry("a", None, "%0", SOCKET),
    ]
    chain = exit_chain(entries, "c", root=True)
    assert [e.from_session for e in chain] == ["a", "b", "a", None]
