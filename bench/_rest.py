"""bench_floor's CPU at rest: the watcher and the console beside a bare Textual app.

For every install, in rooms of 50 registered idle agents (each a live process), at the
same time and over the same quiet window: ``agent-room watch``, and the console
(``agent-room`` with no arguments, in a 200x50 pane of a private tmux server, with its
default settings: its file watch, its deliverer, injector, memory worker and notifier,
its liveness checks). Beside them the floor: a bare Textual app (a header, a footer and a
table of 50 rows) in a pane of the same server. Each process's CPU time (user + system)
over the window, as a percentage of one core.

Then the console's side of the same budget: each update still on screen within 250 ms
of a hook. For each install's console, real hook processes (``agent-room hook`` with the
recorded UserPromptSubmit and Stop payloads) turn one idle agent busy and idle again,
apart; the time from the hook's start until the console's pane shows the new state
(``capture-pane`` every 5 ms).

``python bench/_rest.py HOME PIDS`` seeds a room (run by each install's interpreter,
so each seeds with its own code).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, Stats, bench_env, stop_process, venv_python, wait_until
from _installs import Install, console_command
from _tmux_observer import TmuxServer, perf

AGENTS = 50
SETTLE_S = 3.0
"""After every pane shows its first picture: the start's work done."""
PAYLOADS = ROOT / "tests" / "fixtures" / "claude-code-2.1.330"
BARE_APP = """
from textual.app import App
from textual.widgets import DataTable, Footer, Header

class Bare(App):
    def compose(self):
        yield Header()
        yield DataTable()
        yield Footer()

    def on_mount(self):
        table = self.query_one(DataTable)
        table.add_columns("name", "state", "cwd")
        for n in range(50):
            table.add_row(f"agent-{n:02d}", "idle", "/srv")

Bare().run()
"""
"""The floor: what any Textual app of this shape costs at rest."""


def bare_command() -> str:
    """A pane's command running the bare app with the project's interpreter."""
    return f"exec {shlex.quote(str(venv_python()))} -c {shlex.quote(BARE_APP)}"


def measure_rest(
    installs: Sequence[Install], seconds: float, hooks: int, tmp: Path, step: Callable[[str], None]
) -> dict[str, Any]:
    """CPU at rest of every install's watcher and console and of the bare app; then the
    hook-to-screen latency of every install's console."""
    sleepers = [
        subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL) for _ in range(AGENTS)
    ]
    server = TmuxServer(bench_env(tmp / "rest-tmux"))
    watchers: list[subprocess.Popen[bytes]] = []
    pids: dict[str, int] = {}
    panes: dict[str, tuple[str, Path]] = {}
    try:
        pane = server.start(bare_command())
        pids["bare Textual app"] = _pane_pid(server, pane)
        bare_pane = pane
        for install in installs:
            for kind in ("watch", "console"):
                home = tmp / f"rest-{install.slug}-{kind}" / "room"
                argv = [str(install.python), __file__, str(home)]
                argv.append(",".join(str(p.pid) for p in sleepers))
                subprocess.run(argv, env=install.env(home), check=True, capture_output=True)
                if kind == "watch":
                    watch = [str(install.script), "watch"]
                    null = subprocess.DEVNULL
                    watchers.append(
                        subprocess.Popen(
                            watch, env=install.env(home), stdin=null, stdout=null, stderr=null
                        )
                    )
                    pids[f"{install.label} watch"] = watchers[-1].pid
                    continue
                command = console_command(install, home, tmp / "rest-config")
                pane = server.new_window(install.slug, command)
                pids[f"{install.label} console"] = _pane_pid(server, pane)
                panes[install.label] = (pane, home)
        marks = (f"Sessions {AGENTS}/{AGENTS}", "deliverer active")
        for label, (pane, _home) in panes.items():
            wait_until(
                lambda pane=pane: all(m in _screen(server, pane) for m in marks),  # type: ignore[misc]
                timeout=60, step=0.05, what=f"{label}: the console's first picture",
            )  # fmt: skip
        wait_until(lambda: "agent-00" in _screen(server, bare_pane), timeout=60, step=0.05,
                   what="the bare app's first picture")  # fmt: skip
        time.sleep(SETTLE_S)
        load = os.getloadavg()[0]
        before, wall = {k: cpu_seconds(p) for k, p in pids.items()}, perf()
        step(f"at rest: {len(pids)} processes over {seconds:.0f} s (load average {load:.2f})")
        time.sleep(seconds)
        elapsed = perf() - wall
        used = {k: cpu_seconds(p) - before[k] for k, p in pids.items()}
        result: dict[str, Any] = {
            "window_s": round(elapsed, 2),
            "load_average": [load, os.getloadavg()[0]],
            "cpu_pct": {k: round(100 * v / elapsed, 3) for k, v in used.items()},
            "hook_to_screen": {},
        }
        for what, pct in result["cpu_pct"].items():
            step(f"at rest: {what} {pct:.2f} % of a core")
        agent = sleepers[0].pid
        for label, (pane, home) in panes.items():
            install = next(i for i in installs if i.label == label)
            times = hook_to_screen(server, pane, install, home, agent, hooks)
            result["hook_to_screen"][label] = {k: Stats.of(v).as_ms() for k, v in times.items()}
            median = Stats.of(times["from_start"]).median * 1e3
            step(f"hook to screen: {label} console median {median:.0f} ms")
        return result
    finally:
        server.kill()
        for proc in [*watchers, *sleepers]:
            stop_process(proc)


def _pane_pid(server: TmuxServer, pane: str) -> int:
    return int(server.run("display-message", "-p", "-t", pane, "#{pane_pid}"))


def _screen(server: TmuxServer, pane: str) -> str:
    return server.run("capture-pane", "-p", "-t", pane)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hook_to_screen(
    server: TmuxServer, pane: str, install: Install, home: Path, agent: int, runs: int
) -> dict[str, list[float]]:
    """``runs`` hooks turning agent-00 busy and idle in turn: seconds from each hook's
    start (and from its exit) until the console's row shows the state."""
    found: dict[str, list[float]] = {"from_start": [], "from_exit": []}
    env = install.env(home, CLAUDE_PID=str(agent))
    for n in range(runs):
        event, state = ("UserPromptSubmit", "busy") if n % 2 == 0 else ("Stop", "idle")
        payload = json.loads((PAYLOADS / f"hook-{event}.json").read_text(encoding="utf-8"))
        payload["session_id"] = "idle-0"
        if "prompt_id" in payload:  # each prompt its own, as the client's: a repeated id
            payload["prompt_id"] = str(uuid.uuid4())  # is a hook firing twice, ignored
        started = perf()
        subprocess.run(
            [str(install.script), "hook", event], input=json.dumps(payload).encode(), env=env,
            cwd=home.parent, check=True, capture_output=True,
        )  # fmt: skip
        exited = perf()

        def shown(state: str = state) -> bool:
            return any(
                "@agent-00 " in line and f"● {state}" in line
                for line in _screen(server, pane).splitlines()
            )

        wait_until(
            shown, timeout=10, step=0.005, what=f"{install.label}: the console shows {event}"
        )
        seen = perf()
        found["from_start"].append(seen - started)
        found["from_exit"].append(seen - exited)
        time.sleep(0.3)  # apart, as hooks are
    return found


def seed_idle(home: Path, pids: list[int]) -> None:
    """50 registered idle agents, each a live process; ``idle-N`` is agent-NN's session."""
    from agent_room.room.service import Room
    from agent_room.turn.procfs import read_stat
    from agent_room.turn.room.registry import Registry, SessionFacts

    class Alive:
        def is_alive(self, _pid: int, _start: int | None) -> bool:
            return True

    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    registry = Registry(room, Alive())
    for n, pid in enumerate(pids):
        stat = read_stat(pid)
        registry.register(
            SessionFacts(
                session_id=f"idle-{n}", cwd="/srv", transcript_path=None, pid=pid,
                pid_start=stat.start_ticks if stat else None, pane=f"%{1000 + n}",
                tmux_socket="/nonexistent", agent="claude", name=f"agent-{n:02d}",
                parent_hint=None, ancestors=(),
            )
        )  # fmt: skip
    room.close()


if __name__ == "__main__":
    seed_idle(Path(sys.argv[1]), [int(p) for p in sys.argv[2].split(",")])
