"""The installs a benchmark measures side by side: the tree as developed, a wheel, a revision.

- ``dev``: the project's venv as it is (an editable install); a revision's dev install is
  the same venv with its worktree first on ``PYTHONPATH``.
- a wheel: built from a tree and installed into a fresh virtual environment, the install
  a user has (its dependencies from the project's venv, its bytecode compiled as pip
  compiles it).
- ``--baseline REV``: a temporary git worktree of the revision, for either of the above.

Each install runs its own console script (``agent-room``) from a folder outside any
source tree, so that ``agent_room`` is the install's own.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import ROOT, bench_env, venv_python


@dataclass
class Install:
    """One way of having agent-room: an interpreter, its console script, its path."""

    label: str
    python: Path
    source: Path
    """The tree it was made from (its own code seeds its rooms)."""
    path: str = ""
    """``PYTHONPATH`` (a worktree on the project's venv), empty for an installed wheel."""

    @property
    def slug(self) -> str:
        """The label as a file name."""
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.label)

    @property
    def script(self) -> Path:
        return self.python.parent / "agent-room"

    def env(self, home: Path, **extra: str) -> dict[str, str]:
        env = bench_env(home, **extra)
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed package
        if self.path:
            env["PYTHONPATH"] = self.path
        return env


def dev_install(label: str, source: Path) -> Install:
    return Install(label, venv_python(), source, "" if source == ROOT else str(source))


def wheel_install(label: str, source: Path, tmp: Path) -> Install:
    """A wheel of ``source`` in a fresh venv (its dependencies from the project's venv)."""
    label_slug = re.sub(r"[^A-Za-z0-9._-]+", "-", label)
    copy = tmp / f"src-{label_slug}"
    shutil.copytree(
        source,
        copy,
        ignore=shutil.ignore_patterns(
            ".venv", ".tools", ".git", "__pycache__", "results", "*.egg-info", "build", "tests"
        ),
    )
    wheels = tmp / f"wheels-{label_slug}"
    pip_wheel = ["-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w"]
    _run([str(venv_python()), *pip_wheel, str(wheels), str(copy)])
    venv = tmp / f"venv-{label_slug}"
    _run([str(venv_python()), "-m", "venv", str(venv)])
    wheel = next(wheels.glob("agent_room-*.whl"))
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)])
    site = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    deps = _run([str(venv_python()), "-c", "import textual; print(textual.__path__[0])"])
    (Path(site) / "_agent_room_deps.pth").write_text(str(Path(deps).parent) + "\n")
    _run([str(python), "-m", "compileall", "-q", str(Path(site) / "agent_room")])
    return Install(label, python, source)


def _run(argv: Sequence[str]) -> str:
    """Run a set-up step; its output, stripped."""
    return subprocess.run(list(argv), check=True, capture_output=True).stdout.decode().strip()


def baseline_worktree(rev: str, tmp: Path) -> Path:
    """A detached worktree of ``rev`` under ``tmp`` (``remove_worktree`` when done)."""
    path = tmp / "baseline"
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--quiet", str(path), rev],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return path


def remove_worktree(path: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False,
                   capture_output=True)  # fmt: skip


def installs_of(
    wheel: bool, baseline: str | None, worktree: Path | None, tmp: Path, step: Callable[[str], None]
) -> list[Install]:
    """``dev``, and with ``wheel`` the tree's wheel; then the same for the baseline's
    ``worktree`` (labelled ``REV dev``, ``REV wheel``)."""
    installs = [dev_install("dev", ROOT)]
    if wheel:
        step("building the wheel of this tree into a fresh venv")
        installs.append(wheel_install("wheel", ROOT, tmp))
    if worktree is not None:
        installs.append(dev_install(f"{baseline} dev", worktree))
        if wheel:
            step(f"building the wheel of {baseline} into a fresh venv")
            installs.append(wheel_install(f"{baseline} wheel", worktree, tmp))
    return installs


def rounds(installs: Sequence[Install], runs: int) -> list[list[Install]]:
    """``runs`` rounds with every install once, the first turning round by round."""
    n = len(installs)
    return [[installs[(r + i) % n] for i in range(n)] for r in range(runs)]


def console_command(
    install: Install, home: Path, config: Path, *, without: tuple[str, ...] = ()
) -> str:
    """A tmux pane's command starting ``install``'s console on the room ``home``, as a user
    starts it (``agent-room`` with no arguments), from the room's folder, not a tree's;
    the variables ``without`` unset (the tmux server's too)."""
    env = install.env(home, XDG_CONFIG_HOME=str(config), TERM="xterm-256color")
    keep = ("AGENT_ROOM_", "PYTHONPATH", "PATH", "HOME", "XDG_", "TERM")
    assign = " ".join(
        f"{k}={shlex.quote(v)}" for k, v in env.items() if k.startswith(keep) and k not in without
    )
    unset = "" if "PYTHONPATH" in env else "-u PYTHONPATH "  # the tmux server's own
    unset += "".join(f"-u {name} " for name in without)
    return f"cd {shlex.quote(str(home.parent))} && exec env {unset}{assign} {install.script}"
