"""Benchmark of worktrees and diffs: git's command line against libraries, ``diff --stat``
on a big repository, and the console with 50 agents in worktrees.

Run it from the project root::

    .venv/bin/python bench/bench_worktrees.py            # the full run (a minute or two)
    .venv/bin/python bench/bench_worktrees.py --quick    # a smoke run with small counts

The parts:

1. engines: one refresh of 50 agents' worktrees (each with a commit, a changed file and a
   new file) as the console's code worker does it: branch, ahead/behind its base,
   uncommitted files and the changed files with their lines. With git's command line
   (``adapters.git``, what agent-room uses), and, when they can be imported, with pygit2
   (libgit2) and dulwich doing the same (``pip install --target DIR pygit2 dulwich`` and
   ``PYTHONPATH=DIR`` to compare); medians over rounds;
2. ``agent-room diff NAME --stat`` as a user runs it (a fresh process) on a worktree of a
   repository of 10,000 files, three of them changed: median wall time, and the same
   read in-process;
3. the console (``agent-room`` in a 160x48 tmux pane, as ``bench_console`` runs it): first
   paint of a room of 200 sessions of which 50 work in worktrees with a few changed
   files, and CPU at rest with 50 live agents in worktrees, after their code was read.

The budget: ``diff --stat`` at most 100 ms (median); first paint at most 400 ms at 200
sessions; CPU at rest at most 0.5 %. Results go to ``bench/results/worktrees.json``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, Stats, bench_env, git_state, print_table, venv_script, write_result
from bench_console import (
    CPU_BUDGET_PCT,
    PAINT_BUDGET_MS,
    Pane,
    cpu_seconds,
    first_paint,
    seed_big_room,
    seed_live_room,
)

from agent_room.adapters.git import GitCli
from agent_room.core.worktrees import Worktree
from agent_room.room.service import Room
from agent_room.store import worktrees as store_worktrees
from agent_room.turn.store.db import write_transaction

DIFF_BUDGET_MS = 100.0
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


@dataclass(frozen=True)
class Sizes:
    """How much work each part does."""

    agents: int = 50
    rounds: int = 7
    big_files: int = 10_000
    diff_runs: int = 15
    sessions: int = 200
    paint_runs: int = 5
    settle_seconds: float = 10.0
    rest_seconds: float = 10.0


QUICK = Sizes(agents=10, rounds=2, big_files=2_000, diff_runs=3, paint_runs=1, rest_seconds=3.0)


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path, files: int) -> Path:
    """A repository on ``main`` with ``files`` files in 100 folders, one commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    for i in range(files):
        folder = path / f"pkg{i % 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i}.py").write_text(f"VALUE = {i}\n\n\ndef f():\n    return VALUE\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def add_worktrees(room: Room, repo: Path, names: list[str]) -> list[Worktree]:
    """A worktree per name, made as ``start --worktree`` makes it, with a commit, a
    changed file (the same as four others change) and a new file, recorded."""
    head = git(repo, "rev-parse", "HEAD").strip()
    made = []
    for i, name in enumerate(names):
        path = repo / ".worktrees" / name
        GitCli().add_worktree(str(repo), str(path), name, head, new=True)
        (path / f"pkg{i % 100:02d}" / f"mod{i}.py").write_text(f"VALUE = {i + 1}\n")
        git(path, "commit", "-qam", f"{name}'s change")
        group = i % 10  # five agents to a file, uncommitted: 100 pairs to dry-run
        (path / f"pkg{group:02d}" / f"mod{group}.py").write_text(f"VALUE = -{i}\n")
        (path / f"notes-{name}.md").write_text("one\ntwo\nthree\n")
        worktree = Worktree(name, str(repo), str(path), name, "main", head, time.time())
        store_worktrees.record(room.store, worktree)
        made.append(worktree)
    return made


# -- part 1: engines ----------------------------------------------------------------------


def refresh_cli(trees: list[Worktree]) -> int:
    cli = GitCli()
    files = 0
    for tree in trees:
        files += len(cli.changes(tree.path, "main")[1])
    return files


def refresh_pygit2(trees: list[Worktree]) -> int:
    import pygit2  # type: ignore[import-not-found]

    files = 0
    for tree in trees:
        repo = pygit2.Repository(tree.path)
        head = repo.head.target
        base = repo.branches["main"].target
        repo.ahead_behind(head, base)
        status = repo.status()
        merge_base = repo.merge_base(head, base)
        diff = repo[merge_base].peel(pygit2.Tree).diff_to_workdir(context_lines=0)
        stats = [(p.delta.new_file.path, p.line_stats) for p in diff]
        untracked = [p for p, s in status.items() if s & pygit2.GIT_STATUS_WT_NEW]
        files += len(stats) + len(untracked)
    return files


def refresh_dulwich(trees: list[Worktree]) -> int:
    from dulwich import porcelain  # type: ignore[import-not-found]
    from dulwich.repo import Repo  # type: ignore[import-not-found]

    files = 0
    for tree in trees:
        repo = Repo(tree.path)
        status = porcelain.status(repo, untracked_files="normal")
        walker = repo.get_walker(include=[repo.head()], exclude=[repo.refs[b"refs/heads/main"]])
        ahead = sum(1 for _ in walker)
        del ahead
        files += (
            len(status.unstaged)
            + len(status.untracked)
            + sum(len(v) for v in status.staged.values())
        )
        repo.close()
    return files


def measure_engines(sizes: Sizes, tmp: Path) -> dict[str, Any]:
    repo = make_repo(tmp / "engines" / "repo", 500)
    home = tmp / "engines" / "room"
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    trees = add_worktrees(room, repo, [f"agent-{i:02d}" for i in range(sizes.agents)])
    room.close()
    engines: dict[str, Callable[[list[Worktree]], int]] = {"git CLI": refresh_cli}
    others: list[tuple[str, Callable[[list[Worktree]], int]]] = [
        ("pygit2", refresh_pygit2),
        ("dulwich", refresh_dulwich),
    ]
    for name, run in others:
        try:
            run(trees[:1])
        except ImportError as exc:
            print(f"{name} not compared: {exc}", file=sys.stderr)
            continue
        engines[name] = run
    times: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(sizes.rounds):  # by turns: a busy moment of the machine hits them all
        for name, run in engines.items():
            start = time.perf_counter()
            run(trees)
            times[name].append(time.perf_counter() - start)
    found: dict[str, Any] = {name: Stats.of(t).as_ms() for name, t in times.items()}
    for name, stats in found.items():
        print(f"{name}: {sizes.agents} worktrees in {stats['median_ms']:.0f} ms", file=sys.stderr)
    return found


# -- part 2: diff --stat on 10,000 files ---------------------------------------------------


def measure_diff(sizes: Sizes, tmp: Path) -> dict[str, Any]:
    repo = make_repo(tmp / "big" / "repo", sizes.big_files)
    home = tmp / "big" / "room"
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    (tree,) = add_worktrees(room, repo, ["big"])
    room.join("big", pane=None, agent="claude")
    room.close()
    env = bench_env(home)
    argv = [str(venv_script("agent-room")), "diff", "big", "--stat"]
    subprocess.run(argv, env=env, check=True, capture_output=True)  # warm the page cache
    times, cpu = [], []
    for _ in range(sizes.diff_runs):
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the command's and its git processes' CPU: what a loaded machine cannot inflate
        cpu.append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
    lines = done.stdout.strip().splitlines()
    inside = []
    cli = GitCli()
    for _ in range(sizes.diff_runs):
        start = time.perf_counter()
        cli.changes(tree.path, "main")
        inside.append(time.perf_counter() - start)
    return {
        "files": sizes.big_files,
        "changed": len(lines) - 1,
        "command": Stats.of(times).as_ms(),
        "command_cpu": Stats.of(cpu).as_ms(),
        "in_process": Stats.of(inside).as_ms(),
    }


# -- part 3: the console ------------------------------------------------------------------


def _rest(home: Path, config: Path, sizes: Sizes, mark: str | None) -> float:
    """CPU at rest of a console on the live room, % of a core, once ``mark`` shows."""
    pane = Pane(home, config)
    try:
        first_paint(pane, (f"Sessions {sizes.agents}/{sizes.agents}", "deliverer active"))
        pid = pane.pid()
        shown = time.perf_counter()
        while mark is not None and mark not in pane.screen():
            if time.perf_counter() - shown > 60:
                raise RuntimeError(f"{mark!r} never showed:\n{pane.screen()}")
            time.sleep(0.05)
        time.sleep(sizes.settle_seconds)
        before, wall = cpu_seconds(pid), time.perf_counter()
        time.sleep(sizes.rest_seconds)
        return (cpu_seconds(pid) - before) / (time.perf_counter() - wall) * 100
    finally:
        pane.stop()


def measure_console(sizes: Sizes, tmp: Path) -> dict[str, Any]:
    """First paint and rest, with the code worker (the default) and without it
    (``code = false`` in console.toml), by turns: the same machine, the same moment."""
    configs = {"code": tmp / "config", "no code": tmp / "config-off"}
    (configs["no code"] / "agent-room").mkdir(parents=True)
    (configs["no code"] / "agent-room" / "console.toml").write_text("code = false\n")
    home = tmp / "console" / "room"
    seed_big_room(home, sizes.sessions, 10_000)
    repo = make_repo(tmp / "console" / "repo", 500)
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    names = [f"agent-{i:03d}" for i in range(sizes.agents)]
    trees = add_worktrees(room, repo, names)
    with write_transaction(room.store.conn) as conn:
        conn.executemany(
            "UPDATE sessions SET cwd = $1 WHERE name = $2", [(t.path, t.name) for t in trees]
        )
    room.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    room.close()
    paints: dict[str, list[float]] = {label: [] for label in configs}
    for run in range(sizes.paint_runs + 1):
        for label, config in configs.items():
            pane = Pane(home, config)
            try:
                seconds = first_paint(pane, (f"Sessions {sizes.sessions}/{sizes.sessions}",))
                if run:
                    paints[label].append(seconds)
                print(f"first paint, {sizes.sessions} sessions ({sizes.agents} in worktrees,"
                      f" {label}): {seconds * 1e3:.0f} ms", file=sys.stderr)  # fmt: skip
            finally:
                pane.stop()

    live = tmp / "console" / "live"
    procs = seed_live_room(live, sizes.agents, 10_000)
    repo = make_repo(tmp / "console" / "live-repo", 500)
    room = Room.open({"AGENT_ROOM_HOME": str(live)})
    trees = add_worktrees(room, repo, [f"live-{i:02d}" for i in range(sizes.agents)])
    with write_transaction(room.store.conn) as conn:
        conn.executemany(
            "UPDATE sessions SET cwd = $1 WHERE name = $2", [(t.path, t.name) for t in trees]
        )
    room.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    room.close()
    try:
        rest = {
            "no code": _rest(live, configs["no code"], sizes, None),
            # the code worker reads the worktrees once (their branches show), then rests
            "code": _rest(live, configs["code"], sizes, "live-00 ↑1 ●2"),
        }
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    for label, pct in rest.items():
        print(f"at rest ({label}): {pct:.2f} % of a core", file=sys.stderr)
    return {
        "first_paint": {label: Stats.of(times).as_ms() for label, times in paints.items()},
        "rest_cpu_pct": {label: round(pct, 2) for label, pct in rest.items()},
        "rest_window_s": sizes.rest_seconds,
        "load_average": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--skip-console", action="store_true", help="parts 1 and 2 only")
    args = parser.parse_args(argv)
    compileall.compile_dir(ROOT / "agent_room", quiet=1)
    sizes = QUICK if args.quick else Sizes()
    with tempfile.TemporaryDirectory(prefix="agent-room-bench-wt-") as raw:
        tmp = Path(raw)
        (tmp / "config").mkdir()
        engines = measure_engines(sizes, tmp)
        diff = measure_diff(sizes, tmp)
        console = None if args.skip_console else measure_console(sizes, tmp)
    checks = [
        (f"diff --stat, {diff['files']} files (command)",
         f"{diff['command']['median_ms']:.0f} ms", f"<= {DIFF_BUDGET_MS:.0f} ms",
         diff["command"]["median_ms"] <= DIFF_BUDGET_MS),
    ]  # fmt: skip
    if console is not None:
        paint, rest = console["first_paint"]["code"], console["rest_cpu_pct"]["code"]
        checks += [
            (f"first paint, {sizes.sessions} sessions, {sizes.agents} in worktrees",
             f"{paint['median_ms']:.0f} ms", f"<= {PAINT_BUDGET_MS:.0f} ms",
             paint["median_ms"] <= PAINT_BUDGET_MS),
            (f"CPU at rest, {sizes.agents} live agents in worktrees",
             f"{rest:.2f} %", f"<= {CPU_BUDGET_PCT} %", rest <= CPU_BUDGET_PCT),
        ]  # fmt: skip
    print_table(
        ["engine", f"refresh of {sizes.agents} worktrees, median", "p95"],
        [[n, f"{s['median_ms']:.0f} ms", f"{s['p95_ms']:.0f} ms"] for n, s in engines.items()],
        title="Reading agents' branches and changes",
    )
    print(f"diff --stat in-process: {diff['in_process']['median_ms']:.1f} ms; the command's"
          f" CPU (with its git processes) {diff['command_cpu']['median_ms']:.0f} ms")  # fmt: skip
    if console is not None:
        for label in ("code", "no code"):
            print(f"console, {label}: first paint median"
                  f" {console['first_paint'][label]['median_ms']:.0f} ms,"
                  f" at rest {console['rest_cpu_pct'][label]:.2f} %")  # fmt: skip
    print_table(
        ["measure", "value", "budget", "verdict"],
        [[n, v, b, "PASS" if ok else "FAIL"] for n, v, b, ok in checks],
        title=f"\nWorktrees ({'quick' if args.quick else 'full'} run)",
    )
    passed = all(ok for *_, ok in checks)
    path = write_result(
        "worktrees",
        {
            "quick": args.quick,
            "sizes": asdict(sizes),
            "git": git_state(),
            "engines": engines,
            "diff": diff,
            "console": console,
            "pass": passed,
        },
    )
    print(f"results in {path}", file=sys.stderr)
    print(json.dumps({"pass": passed}))
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
