"""``start --worktree``, ``who``/``tree``'s branch, ``diff``, ``handovers show`` and
``stop --remove-worktree`` as a user runs them: real tmux, real git, a stand-in agent
that registers itself through the real hooks from its worktree."""

from __future__ import annotations

import json
from pathlib import Path

import libtmux

from tests.cli.conftest import one_line_error
from tests.conftest import Cli
from tests.gitrepo import commit, git, make_repo
from tests.poll import wait_for
from tests.tmux.test_launcher import STANDIN_ARGS, _registered, _sessions, tmux_env

__all__ = ["tmux_env"]  # the fixture, used by name


def _start(cli: Cli, env: dict[str, str], name: str, repo: Path, *branch: str) -> str:
    result = cli("start", name, "--cwd", str(repo), "--worktree", *branch, *STANDIN_ARGS, env=env)
    assert result.code == 0, result.err
    return result.err


def test_agents_on_their_own_branches_show_diff_and_hand_over_code(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    said = _start(cli, tmux_env, "alpha", repo)
    assert f"new worktree {repo}/.worktrees/alpha on branch alpha (base main at" in said
    _start(cli, tmux_env, "beta", repo, "feat/beta")
    alpha, beta = repo / ".worktrees" / "alpha", repo / ".worktrees" / "beta"
    assert _registered(cli, "alpha")["cwd"] == str(alpha)  # its hooks speak from there
    assert _registered(cli, "beta")["cwd"] == str(beta)

    sha = commit(alpha, "alpha's", **{"f.txt": "A\nb\nc\n"})
    (alpha / "notes.md").write_text("one\ntwo\n")  # new, not added
    commit(beta, "beta's", **{"f.txt": "B\nb\nc\n"})

    told = json.loads(cli("notify", "--json").out)["alerts"]  # flagged before anyone merges
    assert [a["text"] for a in told if a["kind"] == "code"] == [
        "@alpha and @beta change the same lines of f.txt: merging their branches would"
        " conflict (agent-room diff alpha)"
    ]

    who = cli("who")
    assert who.code == 0, who.err
    lines = {line.split()[0]: line for line in who.out.splitlines()}
    assert "BRANCH" in lines["NAME"]
    assert "alpha ↑1 ●1" in lines["alpha"]
    assert "feat/beta ↑1" in lines["beta"]
    who_json = {s["name"]: s for s in json.loads(cli("who", "--json").out)}
    assert who_json["alpha"]["branch"]["ahead"] == 1
    assert who_json["alpha"]["branch"]["dirty"] == 1
    assert "alpha [idle] ⎇ alpha ↑1 ●1" in cli("tree").out

    stat = cli("diff", "alpha", "--stat")
    assert stat.code == 0, stat.err
    assert stat.out.splitlines() == ["M f.txt +1 -1", "? notes.md +2 -0", "2 files changed, +3 -1"]
    assert f"@alpha's worktree {alpha}, against main" in stat.err
    patch = cli("diff", "alpha")
    assert "-a\n+A" in patch.out
    assert "+one\n+two" in patch.out
    data = json.loads(cli("diff", "alpha", "--json").out)
    assert data["worktree"] is True
    assert [f["path"] for f in data["files"]] == ["f.txt", "notes.md"]

    sent = cli("send", "@beta", "--handover", "take my change to f.txt", name="alpha")
    assert sent.code == 0, sent.err
    hid = sent.out.strip()
    listed = json.loads(cli("handovers", "--json").out)
    assert listed[0]["code"]["commit"] == sha
    assert listed[0]["code"]["target"] == "feat/beta"
    assert listed[0]["code"]["merges_cleanly"] is False
    assert listed[0]["code"]["conflicts"] == ["f.txt"]
    shown = cli("handovers", "show", hid)
    assert shown.code == 0, shown.err
    assert "CONFLICTS with feat/beta in f.txt" in shown.out
    assert "1 uncommitted file left out" in shown.out
    assert json.loads(cli("handovers", "show", hid, "--json").out)["code"]["commit"] == sha

    assert cli("approve", hid).code == 0
    inbox = cli("inbox", "--peek", name="beta").out
    assert f"carries @alpha's code: commit {sha} (branch alpha)" in inbox
    assert f"Merging it into feat/beta conflicts in f.txt: run git merge {sha}" in inbox


def test_stop_keeps_the_worktree_and_removes_it_only_without_unmerged_work(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    _start(cli, tmux_env, "alpha", repo)
    alpha = repo / ".worktrees" / "alpha"
    _registered(cli, "alpha")
    (alpha / "wip.txt").write_text("wip\n")

    refused = cli("stop", "alpha", "--remove-worktree", env=tmux_env)
    one_line_error(refused, 1, "holds work not merged anywhere", "1 file not committed", "--force")
    assert "ac-alpha" in _sessions(server)  # nothing was stopped

    assert cli("stop", "alpha", env=tmux_env).code == 0
    wait_for(lambda: "ac-alpha" not in _sessions(server))
    assert (alpha / "wip.txt").exists()  # stop keeps the worktree

    again = _start(cli, tmux_env, "alpha", repo)  # and start reuses it
    assert f"reusing worktree {alpha} on branch alpha" in again
    _registered(cli, "alpha")
    commit(alpha, "wip")
    one_line_error(cli("stop", "alpha", "--remove-worktree", env=tmux_env), 1, "1 commit on alpha")
    one_line_error(cli("stop", "alpha", "--force", env=tmux_env), 2, "--remove-worktree")
    done = cli("stop", "alpha", "--remove-worktree", "--force", env=tmux_env)
    assert done.code == 0, done.err
    assert f"removed worktree {alpha} (branch alpha kept)" in done.err
    assert not alpha.exists()
    assert "alpha" in git(repo, "branch")


def test_a_plain_checkout_diff_says_it_is_shared(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    for name in ("one", "two"):
        started = cli("start", name, "--cwd", str(repo), *STANDIN_ARGS, env=tmux_env)
        assert started.code == 0, started.err
        _registered(cli, name)
    (repo / "f.txt").write_text("x\n")
    result = cli("diff", "one", "--stat")
    assert result.code == 0, result.err
    assert "plain checkout" in result.err
    assert "shared with @two" in result.err
    assert result.out.splitlines()[0] == "M f.txt +1 -3"
    assert "BRANCH" not in cli("who").out  # nobody has a worktree: no column


def test_worktree_needs_a_repository(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("start", "x", "--cwd", str(plain), "--worktree", *STANDIN_ARGS, env=tmux_env)
    one_line_error(result, 2, "--worktree needs --cwd in a git repository")
    assert "ac-x" not in _sessions(server)
    one_line_error(cli("diff", "nobody"), 1, "no agent @nobody")
    one_line_error(cli("handovers", "show", "99"), 1, "no handover #99")
