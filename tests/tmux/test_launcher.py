"""``agent-room start`` / ``stop`` against a private tmux server, with a stand-in agent."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import libtmux
import pytest

from agent_room.plugin import plugin_dir
from tests.conftest import Cli
from tests.poll import wait_for
from tests.tmux.conftest import STANDIN

STANDIN_ARGS = ("--agent", "command", "--", sys.executable, str(STANDIN))


def _socket(server: libtmux.Server) -> str:
    base = os.environ.get("TMUX_TMPDIR", "/tmp")
    return f"{base}/tmux-{os.getuid()}/{server.socket_name}"


@pytest.fixture
def tmux_env(server: libtmux.Server) -> dict[str, str]:
    """What points the launcher at the test's private tmux server."""
    return {"AGENT_ROOM_TMUX": _socket(server)}


def _who(cli: Cli) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in json.loads(cli("who", "--json").out)}


def _sessions(server: libtmux.Server) -> list[str]:
    result = server.cmd("list-sessions", "-F", "#{session_name}")
    return list(result.stdout) if not result.returncode else []


def _pane_pid(server: libtmux.Server, target: str) -> int:
    return int(server.cmd("display-message", "-p", "-t", target, "#{pane_pid}").stdout[0])


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)


def _registered(cli: Cli, name: str) -> dict[str, Any]:
    found = wait_for(lambda: _who(cli).get(name, {}).get("pid") and _who(cli)[name])
    assert isinstance(found, dict)
    return found


def test_start_runs_the_agent_as_the_pane_process(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], room_home: Path, tmp_path: Path
) -> None:
    work = tmp_path / "api"
    work.mkdir()
    result = cli("start", "backend", "--cwd", str(work), *STANDIN_ARGS, env=tmux_env)
    assert result.code == 0, result.err
    assert "@backend started in tmux session ac-backend" in result.err
    assert "ac-backend" in _sessions(server)

    who = _registered(cli, "backend")
    pane_pid = _pane_pid(server, "=ac-backend:")
    assert who["pid"] == pane_pid  # the agent is the pane's process: nothing typed in a shell
    assert who["cwd"] == str(work)
    assert who["agent"] == "command"
    env = _environ(pane_pid)
    assert env["AGENT_ROOM_NAME"] == "backend"
    assert env["AGENT_ROOM_HOME"] == str(room_home.resolve())
    assert env["AGENT_ROOM_BIN"] == str(Path(sys.executable).parent / "agent-room")
    assert env["AGENT_ROOM_AGENT"] == "command"

    again = cli("start", "backend", *STANDIN_ARGS, env=tmux_env)
    assert again.code == 1
    assert again.err.startswith(
        "agent-room: @backend is already running in tmux session ac-backend (attach: tmux"
    )
    assert again.err.count("\n") == 1


def test_stop_ends_the_agent_and_its_session(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str]
) -> None:
    assert cli("start", "backend", *STANDIN_ARGS, env=tmux_env).code == 0
    assert cli("start", "back", *STANDIN_ARGS, env=tmux_env).code == 0  # a prefix is no clash
    _registered(cli, "backend")
    _registered(cli, "back")

    result = cli("stop", "back", env=tmux_env)
    assert result.code == 0, result.err
    assert result.err == "@back stopped; closed tmux session ac-back\n"
    assert _sessions(server) == ["ac-backend"]
    wait_for(lambda: _who(cli)["back"]["state"] == "ended", timeout=5)
    assert _who(cli)["backend"]["state"] == "idle"

    missing = cli("stop", "back", env=tmux_env)
    assert missing.code == 1
    assert "@back is not running in tmux" in missing.err


def test_bad_input_starts_nothing(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    gone = tmp_path / "nowhere"
    result = cli("start", "backend", "--cwd", str(gone), *STANDIN_ARGS, env=tmux_env)
    assert (result.code, result.err) == (2, f"agent-room: --cwd {gone}: no such directory\n")
    assert cli("start", "Bad/Name", *STANDIN_ARGS, env=tmux_env).code == 2
    assert cli("start", "backend", "--agent", "command", env=tmux_env).code == 2
    assert cli("start", "backend", "--agent", "robot", env=tmux_env).code == 2
    no_agent = cli("start", "backend", "--agent", "command", "--", "no-such-xyz", env=tmux_env)
    assert no_agent.code == 1
    assert "no-such-xyz not found" in no_agent.err
    assert _sessions(server) == []


def test_inside_tmux_it_opens_a_window(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str]
) -> None:
    main = server.new_session(session_name="main")
    pane = main.active_window.active_pane
    assert pane is not None
    assert pane.pane_id is not None
    assert main.session_id is not None
    server_pid = server.cmd("display-message", "-p", "#{pid}").stdout[0]
    inside = {  # what a pane of that server sees
        **tmux_env,
        "TMUX": f"{_socket(server)},{server_pid},{main.session_id[1:]}",
        "TMUX_PANE": pane.pane_id,
    }
    result = cli("start", "bob", *STANDIN_ARGS, env=inside)
    assert result.code == 0, result.err
    assert "@bob started in tmux window bob" in result.err
    assert _sessions(server) == ["main"]
    windows = server.cmd("list-windows", "-t", "=main", "-F", "#{window_name}").stdout
    assert "bob" in windows
    assert _registered(cli, "bob")["pid"] == _pane_pid(server, "=main:bob")

    assert cli("start", "bob", *STANDIN_ARGS, env=inside).code == 1
    detached = cli("start", "carol", "--detach", *STANDIN_ARGS, env=inside)
    assert detached.code == 0, detached.err
    assert "ac-carol" in _sessions(server)

    stopped = cli("stop", "bob", env=inside)
    assert stopped.code == 0, stopped.err
    assert "bob" not in server.cmd("list-windows", "-t", "=main", "-F", "#{window_name}").stdout
    assert "main" in _sessions(server)
    wait_for(lambda: _who(cli)["bob"]["state"] == "ended", timeout=5)


FAKE_CLAUDE = """#!{python}
import json, os, sys, time
record = {{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "pid": os.getpid()}}
with open({out!r} + ".tmp", "w") as handle:
    json.dump(record, handle)
os.rename({out!r} + ".tmp", {out!r})
time.sleep(120)
"""


def test_claude_gets_the_plugin_and_the_room(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], room_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "claude.json"
    fake = tmp_path / "fake-claude"
    fake.write_text(FAKE_CLAUDE.format(python=sys.executable, out=str(out)))
    fake.chmod(0o755)
    work = tmp_path / "app"
    work.mkdir()
    env = {
        **tmux_env,
        "AGENT_ROOM_CLAUDE": str(fake),
        "AGENT_ROOM_HOME": str(room_home),  # a relative one is refused (test_first_contact)
        "CLAUDECODE": "1",  # a launching Claude's own variables must not reach the new one
        "CLAUDE_PID": "1",
    }
    result = cli("start", "coder", "--cwd", str(work), "--", "--model", "opus", "a b", env=env)
    assert result.code == 0, result.err

    wait_for(out.exists)
    record = json.loads(out.read_text())
    assert record["argv"][:1] == ["--settings"]  # its turns' hooks to the room's server
    settings = json.loads(record["argv"][1])
    url = record["env"]["AGENT_ROOM_MCP_URL"].removesuffix("/mcp")
    assert settings["hooks"]["Stop"][0]["hooks"][0] == {
        "type": "http",
        "url": f"{url}/hooks/Stop",
        "headers": {"Authorization": "Bearer $AGENT_ROOM_MCP_TOKEN"},
        "allowedEnvVars": ["AGENT_ROOM_MCP_TOKEN"],
        "timeout": 5,
    }
    assert record["env"]["AGENT_ROOM_HOOKS_HTTP"] == "1"
    assert record["argv"][2:] == [
        "--name",  # the name its peers see in Claude Code's own registry
        "coder",
        "--plugin-dir",
        str(plugin_dir()),
        "--allowedTools=Bash(agent-room:*),mcp__plugin_agent-room_agent-room",
        "--model",
        "opus",
        "a b",
    ]
    assert record["cwd"] == str(work)
    assert record["pid"] == _pane_pid(server, "=ac-coder:")
    assert record["env"]["AGENT_ROOM_NAME"] == "coder"
    assert record["env"]["AGENT_ROOM_HOME"] == str(room_home.resolve())
    assert record["env"]["AGENT_ROOM_AGENT"] == "claude"
    assert Path(record["env"]["AGENT_ROOM_BIN"]).is_absolute()
    assert "CLAUDECODE" not in record["env"]
    assert "CLAUDE_PID" not in record["env"]
    # the room's tools: its address, and a secret of its own read from the room's file by
    # the shell that started it (never on a command line)
    token = (room_home / "mcp" / "coder.token").read_text().strip()
    assert record["env"]["AGENT_ROOM_MCP_TOKEN"] == token
    assert record["env"]["AGENT_ROOM_MCP_URL"].startswith("http://127.0.0.1:")
    assert "AGENT_ROOM_MCP_TOKEN_FILE" not in record["env"]
    assert token not in " ".join(
        server.cmd("list-panes", "-a", "-F", "#{pane_start_command}").stdout
    )

    stopped = cli("stop", "coder", env=tmux_env)  # never registered: the pane's process ends
    assert stopped.code == 0, stopped.err
    assert _sessions(server) == []


def test_missing_claude_is_one_line(cli: Cli, tmux_env: dict[str, str], tmp_path: Path) -> None:
    env = {**tmux_env, "AGENT_ROOM_CLAUDE": str(tmp_path / "no-claude")}
    result = cli("start", "coder", env=env)
    assert result.code == 1
    assert result.err == (
        f"agent-room: {tmp_path / 'no-claude'} not found: point AGENT_ROOM_CLAUDE at the"
        " client, or unset it\n"
    )
    tmux = shutil.which("tmux")
    assert tmux is not None
    env = {**tmux_env, "AGENT_ROOM_CLAUDE": "", "PATH": str(Path(tmux).parent)}
    result = cli("start", "coder", env=env)
    assert result.code == 1
    assert result.err == (
        "agent-room: claude not found: npm install -g @anthropic-ai/claude-code, or set"
        " AGENT_ROOM_CLAUDE (agent-room doctor checks the clients)\n"
    )
    result = cli("start", "coder", "--agent", "codex", env={**env, "AGENT_ROOM_CODEX": ""})
    assert "codex not found: npm install -g @openai/codex, or set AGENT_ROOM_CODEX" in result.err
    assert result.err.count("\n") == 1


def _tmux_wrapper(tmp_path: Path, on_new_session: str) -> dict[str, str]:
    """A ``tmux`` first on PATH that runs the real one, except what ``new-session`` does."""
    real = shutil.which("tmux")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "tmux"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" new-session "*) {on_new_session.format(real=real)} ;; esac\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_start_finds_the_pane_when_tmux_prints_nothing(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    """tmux can exit 0 without printing the new pane (``-P``): start asks for it instead."""
    quiet = _tmux_wrapper(tmp_path, 'exec {real} "$@" >/dev/null')
    result = cli("start", "backend", "--detach", *STANDIN_ARGS, env={**tmux_env, **quiet})
    assert result.code == 0, result.err
    pane = server.cmd("display-message", "-p", "-t", "=ac-backend:", "#{pane_id}").stdout[0]
    assert f"started in tmux session ac-backend ({pane}," in result.err
    assert _registered(cli, "backend")["pane"] == pane


def test_start_that_tmux_did_not_serve_is_one_line(
    server: libtmux.Server, cli: Cli, tmux_env: dict[str, str], tmp_path: Path
) -> None:
    """tmux exits 0 with nothing done (its server could not serve the command)."""
    broken = _tmux_wrapper(tmp_path, "echo 'error creating the socket' >&2; exit 0")
    result = cli("start", "backend", "--detach", *STANDIN_ARGS, env={**tmux_env, **broken})
    assert result.code == 1
    assert result.err.strip() == (
        "agent-room: tmux did not start session ac-backend: error creating the socket"
    )
    assert _sessions(server) == []
