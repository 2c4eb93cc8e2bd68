"""agent-room doctor: each check says what it found and how to fix a problem; it makes
no room and changes nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import Cli


@pytest.mark.sqlite
def test_doctor_makes_no_room_and_names_what_is_missing(cli: Cli, tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    result = cli("doctor", env={"PATH": str(bare), "AGENT_ROOM_CLAUDE": ""})
    assert result.code == 1, result
    assert not cli.home.exists()
    lines = result.out.splitlines()
    assert "FIX  tmux: not installed" in lines
    assert "FIX  agent-room on PATH: not found: the plugin's hooks cannot run it" in result.out
    assert f'-> export PATH="{Path(sys.executable).parent}:$PATH"' in result.out
    assert f"ok   room: {cli.home} not made yet" in result.out


def test_doctor_on_a_room_open_to_others_and_with_hook_errors(cli: Cli) -> None:
    assert cli("join", "api").code == 0
    (cli.home / "errors.log").write_text("2026-01-01T00:00:00 hook Stop: \x1b[2J gone\n")
    cli.home.chmod(0o770)
    result = cli("doctor")
    assert result.code == 1, result
    assert f"FIX  room: {cli.home} is not private (mode 770)" in result.out
    assert f"-> chmod 700 {cli.home}" in result.out
    assert "note hook errors: 1 in" in result.out
    assert "\\x1b[2J gone" in result.out  # the log's text shown, never acted on
    assert "\x1b" not in result.out
    assert "FIX  deliverer: none running: messages wait" in result.out
    cli.home.chmod(0o700)


def test_the_plugin_marketplace_offers_this_installs_plugin(cli: Cli, tmp_path: Path) -> None:
    import json

    from agent_room.plugin import plugin_dir

    result = cli("plugin", "marketplace", env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert result.code == 0, result
    root = Path(result.out.strip())
    assert root == tmp_path / "data" / "agent-room" / "marketplace"
    catalog = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = catalog["plugins"]
    assert (catalog["name"], entry["name"], entry["source"]) == (
        "agent-room",
        "agent-room",
        "./agent-room",
    )
    assert (root / "agent-room").resolve() == plugin_dir()
    again = cli("plugin", "marketplace", env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert Path(again.out.strip()) == root


def _program(path: Path, said: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{said}'\n")
    path.chmod(0o755)


@pytest.mark.sqlite
def test_doctor_finds_the_clients_where_start_looks_and_says_what_is_wrong(
    cli: Cli, tmp_path: Path
) -> None:
    """A client named by its variable is looked up on the PATH as start does; one that is
    not a program is said to be wrong (never ok); one installed by npm -g into a folder
    off the PATH is found there, with the PATH line to add."""
    bare = tmp_path / "bin"
    prefix = tmp_path / "npm-global"
    _program(bare / "npm", str(prefix))
    _program(bare / "my-claude", "2.1.330 (Claude Code)")
    _program(prefix / "bin" / "codex", "codex-cli 0.169.0")
    env = {
        "PATH": str(bare),
        "AGENT_ROOM_CLAUDE": "my-claude",
        "AGENT_ROOM_CODEX": "",  # not the test run's own (.ci/test points it at .tools)
        "AGENT_ROOM_GEMINI": str(tmp_path / "nowhere" / "gemini"),
    }
    result = cli("doctor", env=env)
    lines = result.out.splitlines()
    assert f"ok   Claude Code: 2.1.330 (Claude Code) ({bare / 'my-claude'})" in lines, result
    assert f"note Codex: installed in {prefix / 'bin'}, which is not on PATH" in lines
    assert f'     -> export PATH="{prefix / "bin"}:$PATH" (and in ~/.bashrc)' in lines
    gemini = f"note Gemini: AGENT_ROOM_GEMINI={tmp_path / 'nowhere' / 'gemini'} is not a program"
    assert gemini in lines
    assert "     -> point AGENT_ROOM_GEMINI at the client, or unset it" in lines
    env["AGENT_ROOM_CLAUDE"] = str(tmp_path / "nowhere" / "claude")
    result = cli("doctor", env=env)
    assert result.code == 1
    assert f"FIX  Claude Code: AGENT_ROOM_CLAUDE={env['AGENT_ROOM_CLAUDE']} is not a program" in (
        result.out
    )
