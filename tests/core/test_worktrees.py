"""The pure rules of worktrees: the branch column, branch names, overlaps, instructions."""

from __future__ import annotations

import pytest

from agent_room.core.overlaps import (
    AgentCode,
    conflict_candidates,
    same_file_overlaps,
    shared_checkouts,
)
from agent_room.core.worktrees import (
    BranchState,
    CodePreview,
    CodeRef,
    FileChange,
    MergeCheck,
    check_branch_name,
    take_instructions,
)
from agent_room.turn.core.errors import BadInput


def test_branch_column_shows_only_what_is_not_zero() -> None:
    assert BranchState("backend", "c" * 40).short() == "backend"
    assert BranchState("backend", "c" * 40, ahead=2, behind=1, dirty=3).short() == (
        "backend ↑2 ↓1 ●3"
    )
    assert BranchState(None, "0123456789abc", dirty=1).short() == "01234567 ●1"


@pytest.mark.parametrize("name", ["backend", "feat/api-2", "agent_x"])
def test_good_branch_names_pass(name: str) -> None:
    assert check_branch_name(name) == name


@pytest.mark.parametrize("name", ["", "-x", "a..b", "a b", "x.lock", "a/", "HEAD", "a\x1bb", "a~1"])
def test_bad_branch_names_are_refused(name: str) -> None:
    with pytest.raises(BadInput, match="invalid branch name"):
        check_branch_name(name)


def test_same_file_in_one_plain_checkout_is_an_overlap_and_worktrees_are_not() -> None:
    agents = [
        AgentCode("a", "/repo", frozenset({"x.py", "y.py"})),
        AgentCode("b", "/repo", frozenset({"y.py"})),
        AgentCode("c", "/other", frozenset({"y.py"})),
        AgentCode("d", "/repo", frozenset({"y.py"}), worktree=True, head="1"),
    ]
    found = same_file_overlaps(agents)
    assert [(o.first, o.second, o.paths, o.kind) for o in found] == [
        ("a", "b", ("y.py",), "same-file")
    ]
    assert "@a and @b both changed y.py" in found[0].text()


def test_only_worktree_pairs_sharing_a_file_in_one_repository_are_dry_run() -> None:
    agents = [
        AgentCode("a", "/repo", frozenset({"x"}), worktree=True, head="1"),
        AgentCode("b", "/repo", frozenset({"x"}), worktree=True, head="2"),
        AgentCode("c", "/repo", frozenset({"z"}), worktree=True, head="3"),
        AgentCode("d", "/other", frozenset({"x"}), worktree=True, head="4"),
        AgentCode("e", "/repo", frozenset({"x"}), worktree=True, head="1"),  # same commit
    ]
    pairs = [(f.name, s.name) for f, s in conflict_candidates(agents)]
    assert pairs == [("a", "b"), ("b", "e")]
    # the same commit, but "e" has not committed everything: its work may conflict
    dirty = AgentCode("e", "/repo", frozenset({"x"}), head="1", worktree=True, dirty=True)
    assert [(f.name, s.name) for f, s in conflict_candidates([agents[0], dirty])] == [("a", "e")]


def test_shared_checkouts_names_the_others() -> None:
    assert shared_checkouts([("a", "/r"), ("b", "/r"), ("c", "/s")]) == {
        "a": ("b",),
        "b": ("a",),
        "c": (),
    }


def test_code_ref_survives_the_handover_fields() -> None:
    code = CodeRef("feat", "c" * 40, "/repo/.worktrees/a", uncommitted=2)
    assert CodeRef.from_fields(code.as_fields()) == code
    assert CodeRef.from_fields({"what_to_do": "x"}) is None


def test_instructions_name_the_commit_and_how_to_take_it() -> None:
    code = CodeRef("alpha", "abc123", "/repo")
    clean = CodePreview(code, "beta", (FileChange("f", 1, 0),), MergeCheck(clean=True))
    text = take_instructions(7, "alpha", clean)
    assert "Handover #7 carries @alpha's code: commit abc123 (branch alpha)" in text
    assert "merges cleanly into beta. Take it with: git merge abc123" in text
    assert "git rebase abc123" in text
    assert "git cherry-pick HEAD..abc123" in text
    conflict = CodePreview(code, "beta", merge=MergeCheck(clean=False, conflicts=("f", "g")))
    assert "conflicts in f, g: run git merge abc123" in take_instructions(7, "alpha", conflict)
    dirty = CodePreview(CodeRef("alpha", "abc123", "/r", uncommitted=1), None, problem="x")
    text = take_instructions(7, "alpha", dirty)
    assert "git merge abc123 (x)" in text
    assert "1 file not committed" in text


def test_preview_summary_says_conflicts_and_what_is_left_out() -> None:
    code = CodeRef("alpha", "abcdef1234567", "/r", uncommitted=1)
    preview = CodePreview(
        code, "beta", (FileChange("f", 3, 1),), MergeCheck(clean=False, conflicts=("f",))
    )
    assert preview.summary() == (
        "code: alpha @ abcdef1234; 1 file +3 -1; CONFLICTS with beta in f;"
        " 1 uncommitted file left out"
    )
