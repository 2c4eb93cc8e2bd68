"""The notifier tells who touches what before anyone merges: two worktrees' branches that
would conflict, two agents changing one file of a plain checkout (real git)."""

from __future__ import annotations

from pathlib import Path

from agent_room.adapters.git import GitCli
from agent_room.room.service import Room
from agent_room.workers.notifier import Notifier
from tests.gitrepo import agents_in_worktrees, commit, make_repo
from tests.room.conftest import register
from tests.ui.seed import AliveProbe
from tests.workers.test_notifier import Recording


def test_branches_that_would_conflict_are_told_once(room: Room, tmp_path: Path) -> None:
    a, b = agents_in_worktrees(room, make_repo(tmp_path / "repo"), "alpha", "beta")
    recording = Recording()
    notifier = Notifier(room, AliveProbe(), [recording], use_lease=False, git=GitCli())
    notifier.run_once()
    assert recording.alerts == []
    commit(a, "alpha's", **{"f.txt": "A\nb\nc\n"})
    commit(b, "beta's", **{"f.txt": "B\nb\nc\n"})
    room.store.set_state("s-alpha", "idle", at=room.clock() + 1)  # their turns end
    room.store.set_state("s-beta", "idle", at=room.clock() + 1)
    notifier.run_once()
    assert [(x.kind, x.agent) for x in recording.alerts] == [("code", "alpha")]
    assert recording.alerts[0].text == (
        "@alpha and @beta change the same lines of f.txt: merging their branches would"
        " conflict (agent-room diff alpha)"
    )
    notifier.run_once()
    assert len(recording.alerts) == 1  # told once while it lasts


def test_two_agents_in_one_checkout_changing_one_file_are_told(room: Room, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    register(room, "one", cwd=str(repo))
    register(room, "two", cwd=str(repo))
    (repo / "f.txt").write_text("both at it\n")
    recording = Recording()
    Notifier(room, AliveProbe(), [recording], use_lease=False, git=GitCli()).run_once()
    assert [x.text for x in recording.alerts] == [
        "@one and @two both changed f.txt in one checkout (agent-room diff one)"
    ]


def test_without_git_the_notifier_tells_the_rest(room: Room, tmp_path: Path) -> None:
    room.join("api")
    room.join("web")
    room.send_handover("api", "web", body="one")
    recording = Recording()
    broken = GitCli(program=str(tmp_path / "no-git-here"))
    repo = make_repo(tmp_path / "repo")
    register(room, "one", cwd=str(repo))
    problems: list[tuple[str, str | None]] = []
    notifier = Notifier(
        room, AliveProbe(), [recording], use_lease=False, git=broken,
        on_problem=lambda channel, problem: problems.append((channel, problem)),
    )  # fmt: skip
    notifier.run_once()
    assert [x.kind for x in recording.alerts] == ["handover"]
