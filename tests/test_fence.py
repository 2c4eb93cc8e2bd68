"""The fence around the turn path: what a hook, a ``send`` and a ``status`` load.

Each runs as a fresh ``agent-room`` process (the console script's lines) under
``python -X importtime``, as an agent or a status bar runs it, in a room made the way a
user makes one. Whatever the process imports of this package must be the entry point or
``agent_room.turn``, and whatever else it imports must be the standard library: the
start-up cost of these commands is what the fence holds, so a module of the ordinary
package reached from here (by a new import, lazy or not) fails the test by name.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests.conftest import REPO

PROCESS = "import sys; from agent_room.cli import main; sys.exit(main())"
"""What an installed ``agent-room`` runs (the console script, less the installer's lines)."""
ENTRY = {"agent_room", "agent_room.cli"}
"""The entry point: ``cli.main`` hands the three commands to the turn path first."""
FIXTURES = REPO / "tests" / "fixtures"
CLAUDE = FIXTURES / "claude-code-2.1.330"
CODEX = FIXTURES / "codex-0.169.0" / "hooks-tui"
GEMINI = FIXTURES / "gemini-cli-0.61.0" / "hooks-tui"

HOOKS = [
    (["hook", "SessionStart"], CLAUDE / "hook-SessionStart-startup.json"),
    (["hook", "UserPromptSubmit"], CLAUDE / "hook-UserPromptSubmit.json"),
    (["hook", "Stop"], CLAUDE / "hook-Stop.json"),
    (["hook", "--client", "codex", "UserPromptSubmit"],
        CODEX / "codex-tui-UserPromptSubmit-594.json"),
    (["hook", "--client", "codex", "Stop"], CODEX / "codex-tui-Stop-601.json"),
    (["hook", "--client", "gemini", "BeforeAgent"], GEMINI / "gemini-tui-BeforeAgent.json"),
    (["hook", "--client", "gemini", "AfterAgent"], GEMINI / "gemini-tui-AfterAgent.json"),
    (["hook", "SessionEnd"], CLAUDE / "hook-SessionEnd-other.json"),
]  # fmt: skip


def _loaded(
    args: list[str], env: dict[str, str], stdin: bytes = b"", *, code: str = PROCESS
) -> set[str]:
    """The modules a fresh ``agent-room ARGS`` loads; fails unless it exits 0."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *args],
        input=stdin, capture_output=True, check=False, cwd=REPO, env=env,
    )  # fmt: skip
    lines = result.stderr.decode().splitlines()
    said = [line for line in lines if not line.startswith("import time:")]
    assert result.returncode == 0, (args, said)
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


def _outside_fence(loaded: set[str]) -> set[str]:
    """What a fenced command loaded that it must not: a module of the package outside the
    turn path, or a module beyond the standard library (the interpreter's own start, such
    as a virtual environment's ``.pth`` files, aside)."""
    loaded = loaded - _loaded([], {}, code="pass")
    ours = {m for m in loaded if m == "agent_room" or m.startswith("agent_room.")}
    stray = {m for m in ours - ENTRY if not m.startswith("agent_room.turn")}
    foreign = {m for m in loaded - ours if m.split(".")[0] not in sys.stdlib_module_names}
    return stray | foreign


def _payload(fixture: Path) -> bytes:
    """What the client wrote to its hook's stdin (Codex's and Gemini's fixtures record it
    beside the hook's arguments and environment)."""
    recorded = json.loads(fixture.read_bytes())
    return str(recorded["stdin_raw"]).encode() if "stdin_raw" in recorded else fixture.read_bytes()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A user's environment with a room of two agents, made with the room's commands."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_ROOM_", "PYTHON"))}
    environ |= {"HOME": str(tmp_path), "AGENT_ROOM_HOME": str(tmp_path / "room")}
    for name in ("backend", "frontend"):
        subprocess.run(
            [sys.executable, "-c", PROCESS, "join", name],
            capture_output=True, check=True, cwd=REPO, env=environ,
        )  # fmt: skip
    return environ


def test_hooks_of_every_client_load_only_the_turn_path(env: dict[str, str]) -> None:
    for args, payload in HOOKS:
        loaded = _loaded(args, env | {"AGENT_ROOM_NAME": "backend"}, _payload(payload))
        assert "agent_room.turn.hooks.handlers" in loaded, args  # it did run
        assert _outside_fence(loaded) == set(), args
    assert not (Path(env["AGENT_ROOM_HOME"]) / "errors.log").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["send", "@frontend", "the", "schema", "is", "merged"],
        ["send", "--as", "backend", "@frontend", "ready"],
        ["status"],
        ["status", "--format", "{waiting} waiting"],
    ],
)
def test_send_and_status_load_only_the_turn_path(args: list[str], env: dict[str, str]) -> None:
    loaded = _loaded(args, env | {"AGENT_ROOM_NAME": "backend"} if "--as" not in args else env)
    assert {"agent_room.turn.send", "agent_room.turn.status"} & loaded, args
    assert _outside_fence(loaded) == set(), args


def test_a_shape_the_turn_path_leaves_goes_to_the_command_line(env: dict[str, str]) -> None:
    """A handover is the CLI's (``cli.send``): the fence is what the common shapes load,
    not a limit on what ``send`` can do."""
    handover = ["send", "--handover", "@frontend", "take the API", "--as", "backend"]
    loaded = _loaded(handover, env)
    assert "agent_room.room.outbox" in loaded  # the outbox of a handover, not the turn path's
    assert _outside_fence(loaded)  # the check above sees a module outside the fence


def test_the_turn_path_imports_nothing_of_the_package_outside_it_nor_beyond_the_stdlib() -> None:
    """Every import statement of ``agent_room.turn`` (inside functions and under
    ``TYPE_CHECKING`` too): the runs above see only the branches they take."""
    graph = grimp.build_graph("agent_room", include_external_packages=True, cache_dir=None)
    fenced = {m for m in graph.modules if m.startswith("agent_room.turn")}
    reached = {
        imported
        for module in fenced
        for imported in graph.find_modules_directly_imported_by(module)
        if imported not in fenced
    }
    outside = {m for m in reached if m.startswith("agent_room")}
    foreign = {m for m in reached - outside if m.split(".")[0] not in sys.stdlib_module_names}
    assert outside == set()
    assert foreign == set()


def test_outside_the_fence_no_module_hides_its_type_imports_from_the_interpreter() -> None:
    """The start-up trick of the fence (``TYPE_CHECKING = False``, so that ``typing`` is
    never loaded) stays inside it: everything else is ordinary Python."""
    found = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "agent_room").rglob("*.py"))
        if "TYPE_CHECKING = False" in path.read_text()
        and (REPO / "agent_room" / "turn") not in path.parents
    ]
    assert found == []
