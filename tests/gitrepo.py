"""Real git repositories for the worktree tests: made with git itself, in ``tmp_path``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agent_room.adapters.git import GitCli
from agent_room.room.service import Room
from agent_room.room.worktrees import Worktrees
from tests.room.conftest import register

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path | str, *args: str) -> str:
    """Run git in ``cwd``; its output (it must succeed)."""
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository on ``main`` with one commit of ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"f.txt": "a\nb\nc\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def commit(path: Path | str, message: str, **files: str) -> str:
    """Write ``files`` (name=text) in the checkout ``path``, commit them; the commit id."""
    for name, text in files.items():
        (Path(path) / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-qm", message)
    return git(path, "rev-parse", "HEAD").strip()


def refs(path: Path | str) -> str:
    """Every ref and what it points at: what a dry run must leave as it was."""
    return git(path, "for-each-ref", "--format=%(refname) %(objectname)")


def agents_in_worktrees(room: Room, repo: Path, *names: str) -> list[Path]:
    """What ``start NAME --cwd REPO --worktree`` leaves behind, for each name: a worktree
    made by the room and the agent registered from it (its hooks speak from there)."""
    trees = Worktrees(room, GitCli())
    folders = []
    for name in names:
        worktree, _ = trees.make(name, str(repo), None)
        register(room, name, cwd=worktree.path)
        folders.append(Path(worktree.path))
    return folders
