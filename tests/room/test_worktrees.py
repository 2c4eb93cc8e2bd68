"""Worktrees, diffs and the code handovers carry, on real git repositories and worktrees."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.adapters.git import GitCli
from agent_room.room import code as code_module
from agent_room.room.code import CodeTracker
from agent_room.room.service import Room
from agent_room.room.worktrees import Worktrees, approve_with_code
from agent_room.turn.core.errors import BadInput, Refused
from tests.gitrepo import agents_in_worktrees, commit, git, make_repo, refs
from tests.room.conftest import register


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def trees(room: Room) -> Worktrees:
    return Worktrees(room, GitCli())


def _join(room: Room, name: str, cwd: str, state: str = "idle") -> None:
    register(room, name, cwd=cwd, state=state)


def test_make_puts_the_agent_on_its_own_branch_beside_the_repository(
    trees: Worktrees, repo: Path
) -> None:
    worktree, reused = trees.make("alpha", str(repo), None)
    assert not reused
    assert worktree.path == str(repo / ".worktrees" / "alpha")
    assert worktree.branch == "alpha"
    assert worktree.base_branch == "main"
    assert worktree.base_commit == git(repo, "rev-parse", "main").strip()
    assert git(worktree.path, "branch", "--show-current").strip() == "alpha"
    assert git(repo, "status", "--porcelain") == ""  # .worktrees/ is hidden from main

    again, reused = trees.make("alpha", str(repo), None)
    assert reused
    assert again == worktree
    with pytest.raises(Refused, match="already works in"):
        trees.make("alpha", str(repo), "other")


def test_make_takes_a_branch_and_refuses_a_folder_outside_git(
    trees: Worktrees, repo: Path, tmp_path: Path
) -> None:
    worktree, _ = trees.make("beta", str(repo), "feat/beta")
    assert git(worktree.path, "branch", "--show-current").strip() == "feat/beta"
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(BadInput, match="not in one"):
        trees.make("gamma", str(plain), None)
    with pytest.raises(BadInput, match="invalid branch name"):
        trees.make("delta", str(repo), "bad..name")


def test_state_counts_ahead_behind_and_uncommitted(trees: Worktrees, repo: Path) -> None:
    worktree, _ = trees.make("alpha", str(repo), None)
    commit(worktree.path, "one", **{"f.txt": "A\nb\nc\n"})
    commit(worktree.path, "two", **{"g.txt": "g\n"})
    commit(repo, "main moves", **{"h.txt": "h\n"})
    (Path(worktree.path) / "new.txt").write_text("n\n")
    state = trees.state(worktree)
    assert state is not None
    assert (state.branch, state.ahead, state.behind, state.dirty) == ("alpha", 2, 1, 1)


def test_changes_since_the_base_include_uncommitted_and_untracked(
    trees: Worktrees, repo: Path
) -> None:
    worktree, _ = trees.make("alpha", str(repo), None)
    commit(worktree.path, "one", **{"f.txt": "A\nb\nc\nd\n"})
    (Path(worktree.path) / "f.txt").write_text("A\nb\nC\nd\n")  # and not committed
    (Path(worktree.path) / "new.txt").write_text("1\n2\n")
    commit(repo, "main moves on", **{"m.txt": "m\n"})  # not the agent's change
    changes = trees.changes("alpha")
    assert changes.worktree
    assert [(f.path, f.added, f.removed, f.status) for f in changes.files] == [
        ("f.txt", 3, 2, "M"),
        ("new.txt", 2, 0, "?"),
    ]
    patch = trees.file_diff("alpha", "new.txt")
    assert "+1\n+2" in patch
    assert "-c\n+C" in trees.file_diff("alpha", "f.txt")


def test_a_plain_checkout_is_shared_with_whoever_works_there(
    room: Room, trees: Worktrees, repo: Path
) -> None:
    _join(room, "one", str(repo))
    _join(room, "two", str(repo))
    (repo / "f.txt").write_text("changed\n")
    changes = trees.changes("one")
    assert not changes.worktree
    assert changes.base == "HEAD"
    assert changes.shared_with == ("two",)
    assert [f.path for f in changes.files] == ["f.txt"]


def test_remove_refuses_unmerged_work_unless_forced(trees: Worktrees, repo: Path) -> None:
    worktree, _ = trees.make("alpha", str(repo), None)
    (Path(worktree.path) / "wip.txt").write_text("wip\n")
    with pytest.raises(Refused, match="1 file not committed"):
        trees.remove("alpha", force=False)
    commit(worktree.path, "wip")
    with pytest.raises(Refused, match="1 commit on alpha no other has"):
        trees.remove("alpha", force=False)
    assert Path(worktree.path).is_dir()
    git(repo, "merge", "-q", "alpha")  # merged into main: nothing would be lost
    assert "removed worktree" in trees.remove("alpha", force=False)
    assert not Path(worktree.path).exists()
    assert trees.of("alpha") is None
    assert "alpha" in git(repo, "branch")  # the branch stays

    other, _ = trees.make("beta", str(repo), None)
    (Path(other.path) / "wip.txt").write_text("wip\n")
    assert "removed worktree" in trees.remove("beta", force=True)
    assert not Path(other.path).exists()


def test_handover_code_is_previewed_against_the_recipients_branch_without_writing(
    room: Room, trees: Worktrees, repo: Path
) -> None:
    a, b = agents_in_worktrees(room, repo, "alpha", "beta")
    commit(a, "alpha's", **{"f.txt": "A\nb\nc\n"})
    commit(b, "beta's", **{"g.txt": "g\n"})
    code = trees.code_of("alpha")
    assert code is not None
    assert code.branch == "alpha"
    assert code.commit == git(a, "rev-parse", "HEAD").strip()
    hid = room.send_handover("alpha", "beta", body="take it", code=code)

    def seen() -> tuple[str, str, str]:
        return refs(repo), git(b, "status", "--porcelain"), Path(b, "f.txt").read_text()

    before = seen()
    preview = trees.preview(room.store.handover(hid) or {})
    assert preview is not None
    assert preview.target == "beta"
    assert preview.merge is not None
    assert preview.merge.clean
    assert [(f.path, f.added, f.removed) for f in preview.files] == [("f.txt", 1, 1)]
    assert seen() == before  # a dry run: no ref, index or file moved


def test_a_conflicting_handover_says_so_and_approval_tells_how_to_take_it(
    room: Room, trees: Worktrees, repo: Path
) -> None:
    a, b = agents_in_worktrees(room, repo, "alpha", "beta")
    sha = commit(a, "alpha's", **{"f.txt": "A\nb\nc\n"})
    commit(b, "beta's", **{"f.txt": "B\nb\nc\n"})
    hid = room.send_handover("alpha", "beta", body="take it", code=trees.code_of("alpha"))
    preview = trees.preview(room.store.handover(hid) or {})
    assert preview is not None
    assert preview.merge is not None
    assert not preview.merge.clean
    assert preview.merge.conflicts == ("f.txt",)
    approve_with_code(room, GitCli(), hid)
    body = str((room.store.message(hid) or {})["body"])
    assert body.startswith("take it")
    assert f"commit {sha} (branch alpha)" in body
    assert f"Merging it into beta conflicts in f.txt: run git merge {sha}" in body


def test_a_handover_to_another_repository_is_approved_with_plain_instructions(
    room: Room, trees: Worktrees, repo: Path, tmp_path: Path
) -> None:
    (a,) = agents_in_worktrees(room, repo, "alpha")
    other = make_repo(tmp_path / "other")
    _join(room, "web", str(other))
    sha = commit(a, "alpha's", **{"f.txt": "x\n"})
    hid = room.send_handover("alpha", "web", body="see", code=trees.code_of("alpha"))
    preview = trees.preview(room.store.handover(hid) or {})
    assert preview is not None
    assert preview.merge is None
    assert preview.problem == "@web works in another repository"
    approve_with_code(room, GitCli(), hid)
    assert f"git merge {sha} (@web works in another repository)" in str(
        (room.store.message(hid) or {})["body"]
    )


def test_tracker_reads_an_agent_again_only_when_its_turn_ends(room: Room, repo: Path) -> None:
    tracker = CodeTracker(room, GitCli())
    a, b = agents_in_worktrees(room, repo, "alpha", "beta")
    first = tracker.refresh()
    assert tracker.reads == 2
    assert {c.name for c in first.agents} == {"alpha", "beta"}
    tracker.refresh()
    assert tracker.reads == 2  # nothing moved: no git run
    room.store.set_state("s-alpha", "busy", at=room.clock())  # alpha's turn began
    commit(a, "alpha's", **{"f.txt": "A\nb\nc\n"})
    commit(b, "beta's", **{"f.txt": "B\nb\nc\n"})
    room.store.set_state("s-beta", "idle", at=room.clock())  # beta's turn ended (Stop)
    snap = tracker.refresh()
    assert tracker.reads == 3  # beta only: alpha is busy
    assert snap.overlaps == ()
    room.store.set_state("s-alpha", "idle", at=room.clock())  # alpha's turn ended
    snap = tracker.refresh()
    assert tracker.reads == 4
    assert [(o.first, o.second, o.paths, o.kind) for o in snap.overlaps] == [
        ("alpha", "beta", ("f.txt",), "conflict")
    ]
    assert snap.branches() == {"alpha": "alpha ↑1", "beta": "beta ↑1"}


def test_tracker_flags_two_agents_changing_one_file_of_a_plain_checkout(
    room: Room, repo: Path
) -> None:
    tracker = CodeTracker(room, GitCli())
    _join(room, "one", str(repo))
    _join(room, "two", str(repo))
    (repo / "f.txt").write_text("changed\n")
    snap = tracker.refresh()
    assert [(o.first, o.second, o.kind) for o in snap.overlaps] == [("one", "two", "same-file")]
    one = snap.of("one")
    assert one is not None
    assert one.shared_with == ("two",)


def test_a_deleted_base_branch_falls_back_to_the_first_commit(trees: Worktrees, repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "topic")
    worktree, _ = trees.make("alpha", str(repo), None)
    assert worktree.base_branch == "topic"
    commit(worktree.path, "one", **{"g.txt": "g\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-q", "-D", "topic")
    changes = trees.changes("alpha")
    assert changes.base == worktree.base_commit
    assert [f.path for f in changes.files] == ["g.txt"]


def test_a_new_link_in_the_worktree_is_listed_never_followed(
    trees: Worktrees, repo: Path, tmp_path: Path
) -> None:
    worktree, _ = trees.make("alpha", str(repo), None)
    (tmp_path / "secret").write_text("1\n2\n3\n")
    (Path(worktree.path) / "link").symlink_to(tmp_path / "secret")
    counted = {f.path: (f.added, f.binary) for f in trees.changes("alpha").files}
    assert counted == {"link": (0, True)}  # not the three lines of what it points at


def test_uncommitted_changes_that_would_conflict_are_flagged_without_writing(
    room: Room, repo: Path
) -> None:
    tracker = CodeTracker(room, GitCli())
    a, b = agents_in_worktrees(room, repo, "alpha", "beta")
    (a / "f.txt").write_text("A\nb\nc\n")  # neither commits
    (b / "f.txt").write_text("B\nb\nc\n")
    (b / "new.txt").write_text("n\n")

    def seen() -> tuple[str, str, str, bytes]:
        index = Path(git(b, "rev-parse", "--git-path", "index").strip())
        index = index if index.is_absolute() else b / index
        return (
            refs(repo),
            git(a, "status", "--porcelain"),
            git(b, "status", "--porcelain"),
            (index.read_bytes()),
        )

    before = seen()
    snap = tracker.refresh()
    assert [(o.first, o.second, o.paths, o.kind) for o in snap.overlaps] == [
        ("alpha", "beta", ("f.txt",), "conflict")
    ]
    assert seen() == before  # only objects were written: no ref, index or file moved
    (b / "f.txt").write_text("a\nb\nC\n")  # beta moves to other lines, and its turn ends
    room.store.set_state("s-beta", "idle", at=room.clock() + 1)
    assert tracker.refresh().overlaps == ()


def test_many_agents_on_one_file_are_dry_run_a_few_pairs_a_pass(
    room: Room, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_module, "DRY_RUNS", 2)
    tracker = CodeTracker(room, GitCli())
    folders = agents_in_worktrees(room, repo, "a1", "a2", "a3", "a4")
    for i, folder in enumerate(folders):
        (folder / "f.txt").write_text(f"{i}\nb\nc\n")  # six pairs, each would conflict
    found = []
    for _ in range(3):
        found.append(len(tracker.refresh().overlaps))
    assert found == [2, 4, 6]  # two more each pass, none lost
    assert not tracker.pending


def test_a_new_worktrees_index_is_settled_so_reading_it_never_rereads_every_file(
    tmp_path: Path,
) -> None:
    """A checkout's files share the second of the index written with them: git cannot
    tell them unchanged and reads every one again at each status, and the room, reading
    without the index lock, would never write back that they are. The index is written
    again once that second has passed."""
    repo = make_repo(tmp_path / "repo", {f"pkg/m{i}.py": f"V = {i}\n" for i in range(20)})
    path = tmp_path / "repo" / ".worktrees" / "big"
    GitCli().add_worktree(str(repo), str(path), "big", "main", new=True)
    index = Path(path, git(path, "rev-parse", "--git-path", "index").strip())
    written = int(index.stat().st_mtime)
    seconds = [
        int(line.split()[1].split(":")[0])
        for line in git(path, "ls-files", "--debug").splitlines()
        if line.strip().startswith("mtime:")
    ]
    assert len(seconds) == 20
    assert max(seconds) < written  # none racily clean: a status trusts them all


def test_tracker_passes_over_messages_and_sees_a_member_leave(room: Room, repo: Path) -> None:
    """Most changes to a room are messages, which move no session: a pass after them
    reads nothing again and finds the same overlaps; a member that leaves is gone from
    the next pass, its overlaps with it."""
    tracker = CodeTracker(room, GitCli())
    _join(room, "one", str(repo))
    _join(room, "two", str(repo))
    (repo / "f.txt").write_text("changed\n")
    first = tracker.refresh()
    assert [(o.first, o.second) for o in first.overlaps] == [("one", "two")]
    reads = tracker.reads
    for n in range(5):
        room.send("one", "two", f"message {n}")
    again = tracker.refresh()
    assert tracker.reads == reads
    assert again.overlaps == first.overlaps
    assert again.agents == first.agents
    room.leave("two")
    left = tracker.refresh()
    assert [c.name for c in left.agents] == ["one"]
    assert left.overlaps == ()
