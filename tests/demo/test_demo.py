"""``agent-room demo``: a real tmux server with four simulated agents, run as a user would."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from agent_room.core.heal import GRACE, RECHECK, STALE_AFTER
from agent_room.demo import room as demo_room
from agent_room.demo.conversation import AGENTS
from tests.conftest import Cli, require_tool
from tests.poll import wait_for

SETTLE = 60.0
"""Seconds the demo may take to tell its story on a busy 2-core machine."""


@pytest.fixture(autouse=True)
def _need_tmux() -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")


@pytest.fixture
def tmp_root(tmp_path: Path) -> Iterator[Path]:
    """The temporary directory the demo makes its room in (``$TMPDIR``). Whatever a test
    leaves of a demo there is ended afterwards, also when the demo's process was killed
    (a timeout) before it could stop its room: its tmux server, the agents, the deliverer
    and its kept tmux clients, each by its pid."""
    root = tmp_path / "t"
    root.mkdir()
    yield root
    for left in root.glob("agent-room-demo-*"):
        demo_room.stop(demo_room.Demo(left))
    named = [
        p
        for p in psutil.process_iter(["cmdline"])
        if str(root) in " ".join(p.info["cmdline"] or [])
    ]
    for process in named:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(named, timeout=5)


@pytest.fixture
def demo(cli: Cli, tmp_root: Path) -> Iterator[dict[str, str]]:
    """A demo started with ``--detach``: the environment that points at its room."""
    started = cli("demo", "--detach", env={"TMPDIR": str(tmp_root)})
    assert started.code == 0, started.err
    exports = dict(line.removeprefix("export ").split("=", 1) for line in started.out.splitlines())
    assert set(exports) == {"AGENT_ROOM_HOME", "AGENT_ROOM_TMUX"}
    assert "agent-room demo --stop" in started.err
    assert "lines above" not in started.err  # captured, as eval "$(...)" does: not shown
    yield {**exports, "TMPDIR": str(tmp_root)}
    cli("demo", "--stop", "all", env={"TMPDIR": str(tmp_root)})


def _json(cli: Cli, env: dict[str, str], *args: str) -> Any:
    result = cli(*args, "--json", env=env)
    assert result.code == 0, result.err
    return json.loads(result.out)


def _tmux(env: dict[str, str], *args: str) -> list[str]:
    proc = subprocess.run(
        ["tmux", "-S", env["AGENT_ROOM_TMUX"], *args], capture_output=True, text=True, check=False
    )
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def _screen(env: dict[str, str], name: str) -> str:
    return "\n".join(_tmux(env, "capture-pane", "-p", "-J", "-S", "-", "-t", f"=ac-{name}:"))


def _who(cli: Cli, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in _json(cli, env, "who")}


def _delivered(cli: Cli, env: dict[str, str]) -> list[dict[str, Any]]:
    return [m for m in _json(cli, env, "history", "50") if m["status"] == "delivered"]


def _wait(check: Callable[[], object], cli: Cli, env: dict[str, str]) -> object:
    """``wait_for`` with the room and the agents' panes in the error of a timeout."""
    try:
        return wait_for(check, timeout=SETTLE)
    except AssertionError as exc:
        panes = "\n".join(f"--- @{n}:\n{_screen(env, n)}" for n in AGENTS)
        history = cli("history", "20", env=env).out
        log = Path(env["AGENT_ROOM_HOME"]) / "errors.log"
        logged = log.read_text()[-4000:] if log.exists() else "(no errors.log)"
        said = f"{cli('who', env=env).out}\n{history}\n{panes}\n--- errors.log:\n{logged}"
        raise AssertionError(f"{exc}\n{said}") from None


def test_the_demo_room_runs_and_a_handover_is_approved(
    cli: Cli, demo: dict[str, str], tmp_root: Path
) -> None:
    windows = _tmux(demo, "list-windows", "-t", "=demo", "-F", "#{window_name}")
    assert windows == ["console", "watch", "director"]
    console = _tmux(demo, "display-message", "-p", "-t", "=demo:console", "#{pane_start_command}")
    assert "agent-room" in console[0]
    assert _tmux(demo, "show-environment", "-g", "AGENT_ROOM_HOME") == [
        f"AGENT_ROOM_HOME={demo['AGENT_ROOM_HOME']}"
    ]

    _wait(lambda: len(_who(cli, demo)) == 4, cli, demo)
    panes = {
        line.split()[0]: line.split()[1:]
        for line in _tmux(demo, "list-panes", "-a", "-F", "#{session_name} #{pane_id} #{pane_pid}")
    }
    for name, row in _who(cli, demo).items():
        assert [row["pane"], str(row["pid"])] == panes[f"ac-{name}"]
        assert row["agent"] == "simulated"

    # the story: messages flow, a handover waits, @mobile sits in a permission dialog
    _wait(lambda: _json(cli, demo, "handovers"), cli, demo)
    _wait(lambda: _who(cli, demo)["mobile"]["state"] == "waiting", cli, demo)
    dialog_seen = time.monotonic()
    _wait(lambda: len(_delivered(cli, demo)) >= 3, cli, demo)
    (handover,) = _json(cli, demo, "handovers")
    assert (handover["sender"], handover["recipient"]) == ("backend", "frontend")
    assert "Thanks: wiring GET /tasks" in _screen(demo, "backend")  # a reply came back
    assert "Build the task list view" not in _screen(demo, "frontend")  # held for approval

    approved = cli("approve", str(handover["message_id"]), env=demo)
    assert approved.code == 0, approved.err
    _wait(lambda: "On it: building the task list view" in _screen(demo, "frontend"), cli, demo)
    _wait(lambda: "was approved by the operator" in _screen(demo, "backend"), cli, demo)
    assert _json(cli, demo, "handovers") == []

    # @infra's message to @mobile waits in the room while the dialog is open
    _wait(lambda: _who(cli, demo)["mobile"]["delivery"] == "a permission dialog is open", cli, demo)
    held = [m for m in _json(cli, demo, "history", "50") if m["recipient"] == "mobile"]
    assert [(m["sender"], m["status"]) for m in held] == [("infra", "queued")]
    mobile = _screen(demo, "mobile")
    assert "Do you want to proceed?" in mobile
    assert "[agent-room] " not in mobile.partition("Do you want to proceed?")[2]
    # still waiting once the deliverer has looked again past the grace: its transcript
    # (the tool call that asks) reads as busy, and must not be taken for an answer
    time.sleep(max(0.0, dialog_seen + STALE_AFTER + GRACE + 2 * RECHECK - time.monotonic()))
    assert _who(cli, demo)["mobile"]["state"] == "waiting"

    stopped = cli("demo", "--stop", env=demo)  # the room this terminal points at
    assert stopped.code == 0, stopped.err
    root = Path(demo["AGENT_ROOM_HOME"]).parent
    assert stopped.err.splitlines() == [
        f"stopped the demo room in {root}",
        "this shell still points agent-room at it: unset AGENT_ROOM_HOME AGENT_ROOM_TMUX"
        " (then agent-room uses your own room)",
    ]
    assert list(tmp_root.iterdir()) == []
    assert _tmux(demo, "list-sessions") == []
    # the user's first agent, in a shell that still has the demo's exports: not in there
    work = tmp_root.parent / "api"
    work.mkdir()
    started = cli("start", "api", "--cwd", str(work), "--detach", env=demo)
    assert started.code != 0
    assert "unset AGENT_ROOM_HOME AGENT_ROOM_TMUX" in started.err
    assert list(tmp_root.iterdir()) == []


def test_without_a_terminal_the_demo_prints_the_room_and_stops(cli: Cli, tmp_root: Path) -> None:
    result = cli("demo", env={"TMPDIR": str(tmp_root)})
    assert result.code == 0, result.err
    assert "no terminal: a short look" in result.out
    for name in ("backend", "frontend", "infra", "mobile"):
        assert f"@{name}" in result.out
    assert "#4  @backend -> @frontend" in result.out or "@backend -> @frontend" in result.out
    assert "waiting" in result.out
    assert "The demo room is gone again" in result.out
    assert list(tmp_root.iterdir()) == []


def test_the_scripted_walk_through_still_runs(cli: Cli) -> None:
    result = cli("demo", "--script", "--fast")
    assert result.code == 0, result.err
    assert "approved" in result.out
    assert "The room is gone again" in result.out


def test_stop_leaves_what_is_not_a_demo_alone(cli: Cli, tmp_root: Path) -> None:
    lookalike = tmp_root / "agent-room-demo-notmine"
    lookalike.mkdir(mode=0o755)  # not private: not made by the demo
    (lookalike / "demo.json").write_text("{}")
    unmarked = tmp_root / "agent-room-demo-unmarked"
    unmarked.mkdir(mode=0o700)
    result = cli("demo", "--stop", "all", env={"TMPDIR": str(tmp_root)})
    assert (result.code, result.err) == (0, "no demo room of yours is running\n")
    assert lookalike.exists()
    assert unmarked.exists()


def test_the_demo_ends_naming_a_command_that_works(tmp_root: Path, tmp_path: Path) -> None:
    """``.ci/demo`` runs the checkout's ``.venv/bin/agent-room``, which is not on the PATH:
    the command its last lines name must run as printed, from where the demo was run."""
    script = Path(sys.executable).parent / "agent-room"
    checkout = script.parent.parent.parent  # .venv/bin/agent-room -> the checkout
    tmux = shutil.which("tmux")
    assert tmux is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env.update(TMPDIR=str(tmp_root), PATH=f"{Path(tmux).parent}:/usr/bin:/bin")
    assert shutil.which("agent-room", path=env["PATH"]) is None
    for argv in (["demo", "--seconds", "1"], ["demo", "--script", "--fast"]):
        done = subprocess.run(
            [str(script), *argv], cwd=checkout, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        named = re.findall(r"`([^`]+)`", done.stdout.strip().splitlines()[-2])
        assert named, done.stdout
        program = named[-1].split()[0]
        assert (checkout / program).is_file(), named  # ./.venv/bin/agent-room, from here
        assert "install it on your PATH: pipx install ." in done.stdout
