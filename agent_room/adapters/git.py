"""``GitCli``: the ``Git`` port over git's own command line.

Chosen over pygit2 and dulwich by ``bench/bench_worktrees.py``: the answers that matter
(a merge dry run, untracked files under ``.gitignore`` rules, worktrees) are git's own,
and what the console needs per agent costs two short processes, paid only when that
agent's turn ends. Every call blocks; the console runs them in a worker.

Each git runs with ``GIT_OPTIONAL_LOCKS=0`` so reading an agent's status never takes the
lock on the index the agent's own git may want that instant, without the variables a
git hook of the caller could leak (``GIT_DIR`` ...) and in the C locale, with NUL
separated output where paths are printed so no file name is misread.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agent_room.core.worktrees import BranchState, FileChange, MergeCheck
from agent_room.turn.core.errors import Refused

_LEAKY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")
_COARSE_CLOCK = 0.05
"""Seconds the file system's clock may lag the one ``time.time`` reads (a tick or two)."""
TEXT_LIMIT = 4 * 1024 * 1024
"""An untracked file larger than this is counted as binary rather than read whole."""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LEAKY}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    return env


def _numstat(raw: str) -> list[FileChange]:
    """``--numstat -z`` records: ``ADDED\\tREMOVED\\tPATH\\0`` (renames: an empty path,
    then the old and new paths as their own records)."""
    found: list[FileChange] = []
    items = raw.split("\0")
    i = 0
    while i < len(items):
        record = items[i]
        i += 1
        if not record:
            continue
        added, removed, path = record.split("\t", 2)
        if not path:  # a rename: old path, new path follow
            path = items[i + 1] if i + 1 < len(items) else ""
            i += 2
        binary = added == "-"
        counts = (0, 0) if binary else (int(added), int(removed))
        found.append(FileChange(path, *counts, "M", binary))
    return found


def _raw_numstat(raw: str) -> list[FileChange]:
    """``--raw --numstat -z``: first the raw records (``:MODES SHAS STATUS``, then the
    path, or two for a rename or copy), then the numstat records (``_numstat``)."""
    status: dict[str, str] = {}
    items = raw.split("\0")
    i = 0
    while i < len(items) and items[i].startswith(":"):
        letter = items[i].split()[-1][:1]
        paths = 2 if letter in "RC" else 1
        status[items[i + paths]] = letter
        i += 1 + paths
    return [
        FileChange(f.path, f.added, f.removed, status.get(f.path, "M"), f.binary)
        for f in _numstat("\0".join(items[i:]))
    ]


_SNAPSHOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "agent-room",
    "GIT_AUTHOR_EMAIL": "agent-room@localhost",
    "GIT_COMMITTER_NAME": "agent-room",
    "GIT_COMMITTER_EMAIL": "agent-room@localhost",
}
"""Who the dry run's commit of a working tree is by (it is never on any branch)."""

_STATUS = ("status", "--porcelain=v2", "--branch", "-z", "-uall")


def _parse_status(out: str) -> tuple[str | None, str | None, int, list[str]]:
    """``git status --porcelain=v2 --branch -z``: (branch, head, uncommitted files, new
    untracked files)."""
    branch: str | None = None
    head: str | None = None
    dirty = 0
    untracked: list[str] = []
    records = iter(out.split("\0"))
    for record in records:
        if record.startswith("# branch.oid "):
            oid = record.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
        elif record.startswith("# branch.head "):
            name = record.removeprefix("# branch.head ")
            branch = None if name == "(detached)" else name
        elif record[:2] in ("1 ", "2 ", "u ", "? "):
            dirty += 1
            if record.startswith("2 "):
                next(records, None)  # a rename's original path
            elif record.startswith("? "):
                untracked.append(record[2:])
    return branch, head, dirty, untracked


def _parse_counts(counts: str) -> tuple[int, int]:
    """``rev-list --left-right --count BASE...HEAD``: (ahead, behind)."""
    if len(counts.split()) != 2:
        return 0, 0
    behind, ahead = (int(n) for n in counts.split())
    return ahead, behind


def _count_lines(path: Path) -> tuple[int, bool]:
    """Lines of a new file and whether it is binary (git's rule: a NUL early on)."""
    try:
        # opened without following a link and without blocking (a FIFO would), then
        # read only if it is a regular file of a sane size
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return 0, True
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > TEXT_LIMIT:
                return 0, True
            data = handle.read(TEXT_LIMIT)
        except OSError:
            return 0, True
    if b"\0" in data[:8000]:
        return 0, True
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0), False


class GitCli:
    """The ``Git`` port over the ``git`` program."""

    def __init__(self, program: str = "git") -> None:
        self.program = program

    def _run(
        self,
        cwd: str,
        *args: str,
        ok: tuple[int, ...] = (0,),
        env: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        (found,) = self._run_all(cwd, [(args, ok)], env=env)
        return found

    def _run_all(
        self,
        cwd: str,
        commands: list[tuple[tuple[str, ...], tuple[int, ...]]],
        *,
        env: dict[str, str] | None = None,
    ) -> list[tuple[int, str]]:
        """Run the git ``commands`` at once (they only read; on a big repository each
        walks the files, and side by side they take the time of the slowest); each
        one's (exit code, output), refused when its code is not in its ``ok``. ``env``
        adds to git's environment."""
        env = {**_env(), **(env or {})}
        try:
            procs = [
                subprocess.Popen(
                    [self.program, *args],
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    errors="surrogateescape",
                )
                for args, _ in commands
            ]
        except FileNotFoundError:
            raise Refused("git is not installed (agent-room's worktrees need git 2.38+)") from None
        except NotADirectoryError:
            raise Refused(f"{cwd} is not a folder") from None
        done = [proc.communicate() for proc in procs]
        found = []
        for proc, (out, err), (args, ok) in zip(procs, done, commands, strict=True):
            if proc.returncode not in ok:
                said = err.strip().splitlines()
                detail = said[-1] if said else f"exit status {proc.returncode}"
                raise Refused(f"git {args[0]} failed in {cwd}: {detail}")
            found.append((proc.returncode, out))
        return found

    def _line(self, cwd: str, *args: str) -> str | None:
        code, out = self._run(cwd, *args, ok=(0, 1, 128))
        return out.strip() if code == 0 and out.strip() else None

    def toplevel(self, path: str) -> str | None:
        """The top folder of the checkout ``path`` is in; None outside a repository."""
        if not Path(path).is_dir():
            return None
        return self._line(path, "rev-parse", "--show-toplevel")

    def common_dir(self, path: str) -> str | None:
        """The repository's shared git folder, absolute."""
        if not Path(path).is_dir():
            return None
        found = self._line(path, "rev-parse", "--git-common-dir")
        return str((Path(path) / found).resolve()) if found else None

    def head(self, path: str) -> tuple[str | None, str | None]:
        """The checkout's (branch, commit)."""
        code, out = self._run(path, "rev-parse", "HEAD", "--abbrev-ref", "HEAD", ok=(0, 128))
        lines = out.split()
        if code != 0 or len(lines) < 2:
            return None, None
        return (None if lines[1] == "HEAD" else lines[1]), lines[0]

    def branch_exists(self, repo: str, branch: str) -> bool:
        """Whether ``refs/heads/BRANCH`` exists."""
        ref = f"refs/heads/{branch}"
        code, _ = self._run(repo, "show-ref", "--verify", "--quiet", ref, ok=(0, 1))
        return code == 0

    def add_worktree(self, repo: str, path: str, branch: str, start: str, *, new: bool) -> None:
        """Make a worktree at ``path``, hidden from the main checkout's status, its index
        settled (``_settle_index``)."""
        if new:
            self._run(repo, "worktree", "add", "-b", branch, "--", path, start)
        else:
            self._run(repo, "worktree", "add", "--", path, branch)
        self._exclude(repo, path)
        self._settle_index(path, checked_out=time.time())

    def _settle_index(self, path: str, *, checked_out: float) -> None:
        """Refresh a new worktree's index once the second of its checkout has passed.

        git keeps files' times to the second: the files of a checkout share the second
        the index is written in, so git cannot tell them unchanged and marks them to be
        read again. The room reads worktrees without the index lock (``_env``: it never
        gets in an agent's way), so it would never write the answer back: every status
        read every file again (55 ms on 10,000 files, against 15). The worktree is new
        and its agent not started: taking the lock once here is safe. A failure only
        costs speed."""
        # the files' times come from the kernel's coarse clock, a tick behind: a margin
        time.sleep(max(0.0, math.floor(checked_out) + 1.0 + _COARSE_CLOCK - time.time()))
        with contextlib.suppress(Refused):
            self._run(
                path, "update-index", "-q", "--refresh", ok=(0, 1), env={"GIT_OPTIONAL_LOCKS": "1"}
            )

    def _exclude(self, repo: str, path: str) -> None:
        """List the worktrees' folder in ``info/exclude`` (this clone's own ignore file,
        never committed) so the main checkout does not see it as new files."""
        common = self.common_dir(repo)
        try:
            relative = Path(path).resolve().parent.relative_to(Path(repo).resolve())
        except ValueError:
            return  # made outside the repository: nothing to hide
        if common is None:
            return
        line = f"/{relative.as_posix()}/"
        exclude = Path(common) / "info" / "exclude"
        exclude.parent.mkdir(exist_ok=True)
        text = exclude.read_text() if exclude.exists() else ""
        if line not in text.splitlines():
            with exclude.open("a") as out:
                out.write(("" if not text or text.endswith("\n") else "\n") + line + "\n")

    def remove_worktree(self, repo: str, path: str, *, force: bool) -> None:
        """Remove the worktree (``--force`` also drops its uncommitted changes)."""
        self._run(repo, "worktree", "remove", *(["--force"] if force else []), "--", path)

    def _status(self, path: str) -> tuple[str | None, str | None, int, list[str]]:
        """One ``git status``: (branch, head, uncommitted files, new untracked files)."""
        _, out = self._run(path, *_STATUS)
        return _parse_status(out)

    def _ahead_behind(self, path: str, base: str, head: str | None) -> tuple[int, int]:
        if head is None or base == "HEAD":
            return 0, 0
        code, counts = self._run(
            path, "rev-list", "--left-right", "--count", f"{base}...HEAD", ok=(0, 128)
        )
        return _parse_counts(counts) if code == 0 else (0, 0)

    def branch_state(self, path: str, base: str) -> BranchState:
        """Two processes: the status (branch, head, dirty files) and ahead/behind."""
        branch, head, dirty, _ = self._status(path)
        ahead, behind = self._ahead_behind(path, base, head)
        return BranchState(branch, head, ahead, behind, dirty)

    def changes(self, path: str, base: str) -> tuple[BranchState, tuple[FileChange, ...]]:
        """Three processes: the status, ahead/behind, and one diff of the working tree
        (index included) against the merge base of ``base`` and HEAD, raw records for
        each file's status beside its line counts; untracked files counted as added."""
        (_, status), (_, counts), (code, out) = self._run_all(
            path,
            [
                (_STATUS, (0,)),
                (("rev-list", "--left-right", "--count", f"{base}...HEAD"), (0, 128)),
                (("diff", "--merge-base", base, "--raw", "--numstat", "-z", "-M"), (0, 128)),
            ],
        )
        branch, head, dirty, untracked = _parse_status(status)
        ahead, behind = _parse_counts(counts) if base != "HEAD" else (0, 0)
        state = BranchState(branch, head, ahead, behind, dirty)
        if head is None:
            return state, ()
        if code != 0:  # no such base (a base branch deleted): the caller falls back
            raise Refused(f"git diff failed in {path}: no merge base with {base}")
        found = _raw_numstat(out)
        for name in untracked:
            lines, binary = _count_lines(Path(path) / name)
            found.append(FileChange(name, lines, 0, "?", binary))
        return state, tuple(sorted(found, key=lambda f: f.path))

    def patch(self, path: str, base: str, untracked: Sequence[str]) -> str:
        """One diff of the tracked files against the merge base, then each new file."""
        _, out = self._run(path, "diff", "--no-color", "-M", "--merge-base", base)
        return out + "".join(self._new_file(path, name) for name in untracked)

    def _new_file(self, path: str, name: str) -> str:
        if not (Path(path) / name).is_file():
            return ""
        _, out = self._run(
            path, "diff", "--no-color", "--no-index", "--", os.devnull, name, ok=(0, 1)
        )
        return out

    def file_diff(self, path: str, base: str, file: str) -> str:
        """One file's patch against the merge base; a new untracked file as all added."""
        _, out = self._run(path, "diff", "--no-color", "-M", "--merge-base", base, "--", file)
        return out or self._new_file(path, file)

    def commit_changes(self, repo: str, target: str, commit: str) -> tuple[FileChange, ...]:
        """What ``commit`` brings that ``target`` lacks."""
        _, out = self._run(repo, "diff", "--numstat", "-z", "-M", f"{target}...{commit}", "--")
        return tuple(_numstat(out))

    def merge_check(self, repo: str, target: str, commit: str) -> MergeCheck:
        """``git merge-tree --write-tree``: git's own merge, in memory; it writes the
        merged tree's objects to the object store and no ref, index or file."""
        code, out = self._run(
            repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z",
            target, commit, ok=(0, 1),
        )  # fmt: skip
        if code == 0:
            return MergeCheck(clean=True)
        names = [n for n in out.split("\0")[1:] if n]
        return MergeCheck(clean=False, conflicts=tuple(dict.fromkeys(names)))

    def snapshot(self, path: str) -> str | None:
        """A commit of the checkout as it is, uncommitted and new files included, for a
        merge dry run. Made through a private copy of the checkout's index in a folder of
        our own, so git writes only objects: no ref moves and the agent's own index is
        never touched. None on a repository with no commit yet."""
        _, head = self._run(path, "rev-parse", "--verify", "--quiet", "HEAD", ok=(0, 1, 128))
        _, index = self._run(path, "rev-parse", "--git-path", "index")
        if not head.strip():
            return None
        with tempfile.TemporaryDirectory(prefix="agent-room-git-") as folder:
            private = Path(folder) / "index"
            own = Path(path) / index.strip()
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(own, private)  # its stat cache: only changed files are read
            env = {"GIT_INDEX_FILE": str(private), **_SNAPSHOT_IDENTITY}
            if not private.exists():
                self._run(path, "read-tree", "HEAD", env=env)
            self._run(path, "add", "--all", "--", ".", env=env)
            _, tree = self._run(path, "write-tree", env=env)
            message = "agent-room: the working tree, for a merge dry run"
            _, found = self._run(
                path, "commit-tree", tree.strip(), "-p", head.strip(), "-m", message, env=env
            )
        return found.strip() or None

    def unmerged(self, repo: str, branch: str) -> int:
        """Commits of ``branch`` no other branch, tag or remote-tracking branch reaches."""
        ref = f"refs/heads/{branch}"
        if not self.branch_exists(repo, branch):
            return 0
        _, out = self._run(
            repo, "rev-list", "--count", ref, "--not", f"--exclude={branch}", "--branches",
            "--tags", "--remotes",
        )  # fmt: skip
        return int(out.strip() or 0)
