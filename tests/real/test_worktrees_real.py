"""Two real Claude Code agents, each in its own worktree (``start --worktree``), change
one file through the model stand-in, one hands over; the pair is flagged as conflicting
before anyone merges, and the recipient receives the exact way to take the work."""

from __future__ import annotations

import json
from pathlib import Path

from agent_room.demo.model_api import Reply, Script
from tests.gitrepo import git, make_repo
from tests.real.conftest import TURN, RealRoom

ALLOW = ("--permission-mode", "acceptEdits", "--allowedTools=Bash")
"""The stand-in's shell calls write and commit files: allowed (the default auto mode sets
a ``Bash`` rule aside and asks its server-side check, which the stand-in does not have),
so no dialog opens."""


def test_worktree_agents_hand_over_code_and_the_recipient_is_told_how_to_take_it(
    real: RealRoom, script: Script, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "user.name", "agents")
    git(repo, "config", "user.email", "agents@example.invalid")
    script.add(
        "CHANGE-B",
        Reply("Changed.", bash="printf 'B\\nb\\nc\\n' > f.txt && git commit -qam 'beta: f'"),
    )
    script.add(
        "CHANGE-A",
        Reply(
            "Handing over.",
            bash="printf 'A\\nb\\nc\\n' > f.txt && git commit -qam 'alpha: f'"
            " && agent-room send @beta --handover 'take my f.txt (ho-code-7)'",
        ),
    )
    real.start("alpha", "beta", args=ALLOW, repo=repo)
    alpha, beta = repo / ".worktrees" / "alpha", repo / ".worktrees" / "beta"
    assert real.member("alpha")["cwd"] == str(alpha)  # the client runs in its worktree
    assert git(alpha, "branch", "--show-current").strip() == "alpha"

    real.type("beta", "CHANGE-B: change f.txt")
    real.wait(lambda: "beta: f" in git(beta, "log", "--oneline"), TURN, "beta")
    real.wait(lambda: real.member("beta")["state"] == "idle", TURN, "beta")
    real.type("alpha", "CHANGE-A: change f.txt and hand it over")
    pending = real.wait(lambda: real.rows("handovers"), TURN, "alpha")
    assert isinstance(pending, list)
    sha = git(alpha, "rev-parse", "HEAD").strip()
    code = pending[0]["code"]
    assert (code["branch"], code["commit"], code["target"]) == ("alpha", sha, "beta")
    assert code["merges_cleanly"] is False
    assert code["conflicts"] == ["f.txt"]

    # the pair is flagged before anyone merges: what the notifier tells
    told = json.loads(real.run("notify", "--json").out)["alerts"]
    code_alerts = [a for a in told if a["kind"] == "code"]
    assert [a["agent"] for a in code_alerts] == ["alpha"]
    assert "@alpha and @beta change the same lines of f.txt" in code_alerts[0]["text"]

    hid = str(pending[0]["message_id"])
    shown = real.run("handovers", "show", hid)
    assert "CONFLICTS with beta in f.txt" in shown.out
    assert real.run("approve", hid).code == 0
    real.wait(lambda: real.seen.turns_showing("beta", f"git merge {sha}"), TURN, "beta")
    told = next(s for s in real.seen.shown("beta") if f"git merge {sha}" in s)
    assert "ho-code-7" in told
    assert f"carries @alpha's code: commit {sha} (branch alpha)" in told
    assert "Merging it into beta conflicts in f.txt" in told
