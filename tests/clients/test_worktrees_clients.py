"""Codex CLI and Gemini CLI agents started with ``--worktree``: each changes a file on
its own branch through the stand-in's shell call, one hands over, the pair is flagged as
conflicting, and the recipient is told exactly how to take the work."""

from __future__ import annotations

import json
from pathlib import Path

from agent_room.demo.client_api import StandIn
from tests.clients.conftest import TURN, ClientRoom
from tests.gitrepo import git, make_repo


def test_worktree_agents_hand_over_code(
    clients: ClientRoom, standin: StandIn, kind: str, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "user.name", "agents")
    git(repo, "config", "user.email", "agents@example.invalid")
    # the stand-in's shell call writes and commits: Codex's sandbox keeps git's folders
    # read-only, a worktree's too (the folder its `.git` file names), and Gemini asks
    # before a shell command that redirects; the user lets each do it, as here
    let = {"codex": ("--sandbox", "danger-full-access"), "gemini": ("--approval-mode", "yolo")}
    args = let[kind]
    clients.start("alpha", kind, repo=repo, args=args)
    clients.start("beta", kind, repo=repo, args=args)
    alpha, beta = repo / ".worktrees" / "alpha", repo / ".worktrees" / "beta"

    clients.type("beta", "RUNSHELL: printf 'B\\nb\\nc\\n' > f.txt && git commit -qam beta-f")
    clients.wait(lambda: "beta-f" in git(beta, "log", "--oneline"), TURN, "beta")
    assert clients.member("beta")["cwd"] == str(beta)  # its hooks speak from the worktree
    clients.wait(lambda: clients.member("beta").get("state") == "idle", TURN, "beta")
    clients.type(
        "alpha",
        "RUNSHELL: printf 'A\\nb\\nc\\n' > f.txt && git commit -qam alpha-f"
        " && agent-room send @beta --handover 'take f.txt (ho-code-9)'",
    )
    pending = clients.wait(lambda: clients.rows("handovers"), TURN, "alpha")
    assert isinstance(pending, list)
    sha = git(alpha, "rev-parse", "HEAD").strip()
    code = pending[0]["code"]
    assert (code["branch"], code["commit"], code["target"]) == ("alpha", sha, "beta")
    assert code["conflicts"] == ["f.txt"]

    told = json.loads(clients.run("notify", "--json").out)["alerts"]  # the pair is flagged
    assert [(a["kind"], a["agent"]) for a in told if a["kind"] == "code"] == [("code", "alpha")]

    assert clients.run("approve", str(pending[0]["message_id"])).code == 0
    clients.wait(lambda: standin.saw(f"git merge {sha}"), TURN, "beta")
    assert standin.saw(f"carries @alpha's code: commit {sha} (branch alpha)")
