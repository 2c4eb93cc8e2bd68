"""The layering of DESIGN.md section 2, checked in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.conftest import REPO

HEAVY = ("textual", "libtmux", "watchfiles", "psutil", "sqlite3", "subprocess")


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    return set(json.loads(out))


def _loaded_after(statement: str) -> set[str]:
    return {name.split(".")[0] for name in _modules_after(statement)}


def test_core_imports_no_io_libraries() -> None:
    modules = (
        "import agent_room.core.models, agent_room.turn.core.names, agent_room.turn.core.bodies,"
        " agent_room.core.handover, agent_room.turn.core.format, agent_room.core.enums"
    )
    loaded = _loaded_after(modules)
    assert "pydantic" in loaded  # the check itself works
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def _run_cli(argv: list[str], home: Path) -> tuple[object, str, set[str]]:
    """``agent-room ARGV`` in a fresh process: its exit code, its stdout and the modules it
    loaded (each by its full name and by its top package)."""
    code = (
        "import contextlib, io, json, sys\n"
        "from agent_room.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        code = main({argv!r})\n"
        "    except SystemExit as exc:\n"
        "        code = exc.code\n"
        "print(json.dumps([code, out.getvalue(), sorted(sys.modules)]))"
    )
    env = {**os.environ, "AGENT_ROOM_HOME": str(home)}
    env.pop("AGENT_ROOM_NAME", None)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, env=env
    )
    exit_code, out, modules = json.loads(result.stdout)
    return exit_code, out, {*modules, *(name.split(".")[0] for name in modules)}


@pytest.mark.parametrize("command", ["--help", "history"])
def test_cli_fast_paths_load_no_pydantic_or_ui(command: str, tmp_path: Path) -> None:
    """The whole command runs (its lazy imports included), not just the CLI's modules."""
    room = tmp_path / "room"
    if command == "history":
        opened = Room.open({"AGENT_ROOM_HOME": str(room)})
        for name in ("a", "b"):
            opened.join(name)
        opened.send("a", "b", "a message to print")
        opened.close()
    code, out, loaded = _run_cli([command], room)
    assert code in (0, None)
    assert ("Usage: agent-room" if command == "--help" else "a message to print") in out
    assert not loaded & {"pydantic", "textual", "libtmux", "watchfiles", "psutil"}


@pytest.mark.parametrize("command", [["usage", "--help"], ["budget", "--help"]])
def test_a_commands_help_loads_no_price_data(command: list[str], tmp_path: Path) -> None:
    """genai-prices' data costs 130 ms to load: what prices nothing never loads it."""
    code, out, loaded = _run_cli(command, tmp_path / "room")
    assert code in (0, None)
    assert "Usage: agent-room" in out
    assert "click" in loaded  # the check itself works
    assert "genai_prices" not in loaded


@pytest.mark.parametrize("command", [["history", "5"], ["inbox", "--peek", "--as", "b"]])
def test_reading_messages_loads_only_the_turn_path_and_the_cli(
    command: list[str], tmp_path: Path
) -> None:
    """An agent runs ``inbox`` after each nudge: it opens ``RoomCore`` and loads nothing
    of the rest of the room (its links, memory, roster, the typed models)."""
    room = tmp_path / "room"
    opened = Room.open({"AGENT_ROOM_HOME": str(room)})
    for name in ("a", "b"):
        opened.join(name)
    opened.send("a", "b", "a message to read")
    opened.close()
    code, out, every = _run_cli(command, room)
    assert code in (0, None)
    assert "a message to read" in out
    loaded = [m for m in every if m.startswith("agent_room.")]
    assert "agent_room.cli.messages" in loaded  # the check itself works
    assert [m for m in loaded if not m.startswith(("agent_room.cli", "agent_room.turn"))] == []


@pytest.mark.parametrize("command", [["who"], ["who", "--json"], ["tree"]])
def test_who_loads_the_roster_not_the_whole_room(command: list[str], tmp_path: Path) -> None:
    """``who`` opens ``RoomCore`` and reads the roster: nothing of the room's memory
    (rapidfuzz, the checkpoints), its handover rules (``Room``), nor psutil (Linux
    answers from ``/proc``)."""
    room = tmp_path / "room"
    opened = Room.open({"AGENT_ROOM_HOME": str(room)})
    opened.join("api")
    opened.close()
    code, out, loaded = _run_cli(command, room)
    assert code in (0, None)
    assert "api" in out  # the check itself works
    assert "agent_room.room.roster" in loaded
    unneeded = {"agent_room.room.service", "agent_room.room.memory", "rapidfuzz", "psutil"}
    assert loaded & unneeded == set()


def test_import_linter_contracts_hold() -> None:
    lint = REPO / ".venv" / "bin" / "lint-imports"
    exe = str(lint) if lint.exists() else "lint-imports"
    result = subprocess.run([exe], capture_output=True, text=True, cwd=REPO, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


def test_the_console_paints_before_loading_validation_tmux_or_markdown(tmp_path: Path) -> None:
    """What ``agent-room`` does up to ``app.run()`` with no config file: pydantic, libtmux
    and the Markdown renderer load later, when something needs them."""
    environ = {"AGENT_ROOM_HOME": str(tmp_path / "room"), "XDG_CONFIG_HOME": str(tmp_path)}
    loaded = _modules_after(
        "from agent_room.ui.app import make_app\n"
        "from agent_room.ui.settings import ConsoleSettings\n"
        f"app = make_app(ConsoleSettings.load({environ!r}))\n"
        "assert app.theme == 'agent-room-dark', app.theme"
    )
    assert "textual.app" in loaded  # the check itself works
    assert not {"pydantic", "libtmux", "rich.markdown"} & loaded
