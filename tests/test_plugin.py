"""The Claude Code plugin: manifest, hooks, the hook launcher, and its place in the wheel.

The plugin must pass Claude Code's own validator, register exactly the hook events the
room listens to, and never break a session: its launcher exits 0 when agent-room is not
installed (one line in the room's errors.log says why), and hands the event and the
payload over when it is.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from agent_room.turn.hooks.payload import KNOWN_EVENTS
from tests.conftest import require_tool

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "plugin"
LAUNCHER = PLUGIN / "bin" / "agent-room-hook"

EVENTS = KNOWN_EVENTS
"""The plugin registers exactly the events the hook handles, and no others."""

NO_MATCHER = ("UserPromptSubmit", "Stop")
"""Events Claude Code matches nothing against: a matcher there would be ignored."""

SEED_PEOPLE = ("mikkel", "silas", "rhyneer", "/users/")
"""Author and user names (and home paths) from the seeds: examples from elsewhere."""

PLUGIN_FILES = (
    ".claude-plugin/plugin.json",
    ".mcp.json",
    "hooks/hooks.json",
    "bin/agent-room-hook",
    "skills/agent-room/SKILL.md",
    "commands/chat.md",
    "commands/enter-agent.md",
    "commands/exit-agent.md",
)

PAYLOAD = json.dumps(
    {
        "session_id": "5d2c1f0e-0000-4000-8000-000000000001",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
).encode()


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _claude_binary() -> str | None:
    """The Claude Code CLI: $AGENT_ROOM_CLAUDE, the project's pinned copy, or PATH."""
    configured = os.environ.get("AGENT_ROOM_CLAUDE")
    if configured:
        return configured
    pinned = REPO / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return str(pinned)
    return shutil.which("claude")


def _bare_path(tmp_path: Path) -> str:
    """A PATH with ``cat`` and nothing else, so no agent-room can be found on it."""
    bindir = tmp_path / "bare-bin"
    bindir.mkdir()
    cat = shutil.which("cat")
    assert cat is not None
    (bindir / "cat").symlink_to(cat)
    return str(bindir)


def _sh() -> str:
    sh = shutil.which("sh")
    assert sh is not None
    return sh


def _fake_agent_room(path: Path, record: Path) -> Path:
    """A stand-in agent-room that records its argv and stdin, and answers on stdout."""
    path.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"$@\" > '{record}/argv'\n"
        f"cat > '{record}/stdin'\n"
        "printf '{\"continue\": true}'\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def _launch(event: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """Run the plugin's hook launcher for ``event`` with the test payload on stdin."""
    return subprocess.run(
        [_sh(), str(LAUNCHER), event],
        input=PAYLOAD,
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )


def test_claude_validates_the_plugin_strictly() -> None:
    claude = _claude_binary()
    require_tool(claude is not None, "the Claude Code CLI (set AGENT_ROOM_CLAUDE or run .ci/setup)")
    assert claude is not None
    env = {**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    result = subprocess.run(
        [claude, "plugin", "validate", "--strict", "plugin"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Validation passed" in output


def test_hooks_register_exactly_the_room_events_through_the_launcher() -> None:
    config = _load(PLUGIN / "hooks" / "hooks.json")
    hooks = config["hooks"]
    assert sorted(hooks) == sorted(EVENTS)
    for event, groups in hooks.items():
        assert len(groups) == 1, event
        (group,) = groups
        if event in NO_MATCHER:
            assert "matcher" not in group, event
        (hook,) = group["hooks"]
        assert hook["type"] == "command"
        assert hook["command"] == f'sh "${{CLAUDE_PLUGIN_ROOT}}/bin/agent-room-hook" {event}'
        assert isinstance(hook["timeout"], int)
        # SessionEnd has 1.5 s in total: the hook gets the smallest budget there is
        assert 1 <= hook["timeout"] <= (1 if event == "SessionEnd" else 5), event


def test_the_launcher_is_an_executable_posix_script() -> None:
    mode = LAUNCHER.stat().st_mode
    assert stat.S_IMODE(mode) == 0o755
    assert LAUNCHER.read_text(encoding="utf-8").startswith("#!/bin/sh\n")
    subprocess.run([_sh(), "-n", str(LAUNCHER)], check=True)


@pytest.mark.parametrize("bin_value", ["missing", "not-executable", "directory", ""])
@pytest.mark.parametrize("direct", [False, True], ids=["via-sh", "direct"])
def test_without_agent_room_the_launcher_drains_stdin_and_exits_0_quietly(
    tmp_path: Path, bin_value: str, direct: bool
) -> None:
    targets = {
        "missing": tmp_path / "nowhere" / "agent-room",
        "not-executable": tmp_path / "plain-file",
        "directory": tmp_path,
    }
    targets["not-executable"].write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    env = {"PATH": _bare_path(tmp_path), "AGENT_ROOM_BIN": str(targets.get(bin_value, ""))}
    command = [str(LAUNCHER)] if direct else [_sh(), str(LAUNCHER)]
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [*command, "SessionStart"],
            stdin=subprocess.PIPE,
            stdout=stdout,
            stderr=stderr,
            env=env,
        )
        assert proc.stdin is not None
        # more than a pipe holds: an undrained stdin would fail this write with EPIPE
        proc.stdin.write(PAYLOAD + b" " * (1 << 20))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    assert out.read_bytes() == b""
    assert err.read_bytes() == b""


def _tools_path(tmp_path: Path) -> str:
    """A PATH with the usual tools of a shell (cat, date, ls, mkdir, tr) and no agent-room."""
    bindir = tmp_path / "tools-bin"
    bindir.mkdir()
    for tool in ("cat", "date", "ls", "mkdir", "tr"):
        found = shutil.which(tool)
        assert found is not None
        (bindir / tool).symlink_to(found)
    return str(bindir)


@pytest.mark.parametrize("bin_value", ["", "missing"])
def test_without_agent_room_the_launcher_says_so_in_the_rooms_error_log(
    tmp_path: Path, bin_value: str
) -> None:
    home = tmp_path / "room"
    env = {"PATH": _tools_path(tmp_path), "AGENT_ROOM_HOME": str(home)}
    if bin_value:
        env["AGENT_ROOM_BIN"] = str(tmp_path / "nowhere" / "agent-room")
    result = _launch("SessionStart", env)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    (line,) = (home / "errors.log").read_text(encoding="utf-8").splitlines()
    assert " hook SessionStart: " in line
    why = "AGENT_ROOM_BIN is not an executable file" if bin_value else "not on the PATH"
    assert why in line
    assert "the session is not in the room" in line
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "errors.log").stat().st_mode) == 0o600


def test_the_launcher_never_writes_a_hard_linked_or_symlinked_log(tmp_path: Path) -> None:
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("keep\n", encoding="utf-8")
    (home / "errors.log").symlink_to(victim)
    env = {"PATH": _tools_path(tmp_path), "AGENT_ROOM_HOME": str(home)}
    assert _launch("Stop", env).returncode == 0
    (home / "errors.log").unlink()
    os.link(victim, home / "errors.log")
    assert _launch("Stop", env).returncode == 0
    assert victim.read_text(encoding="utf-8") == "keep\n"


def test_the_launcher_hands_event_and_stdin_to_agent_room_bin(tmp_path: Path) -> None:
    record = tmp_path / "record"
    record.mkdir()
    fake = _fake_agent_room(tmp_path / "my-agent-room", record)
    env = {"PATH": _bare_path(tmp_path), "AGENT_ROOM_BIN": str(fake)}
    result = _launch("UserPromptSubmit", env)
    assert result.returncode == 0, result.stderr
    assert (record / "argv").read_text(encoding="utf-8").splitlines() == [
        "hook",
        "UserPromptSubmit",
    ]
    assert (record / "stdin").read_bytes() == PAYLOAD
    assert result.stdout == b'{"continue": true}'


def test_the_launcher_finds_agent_room_on_path(tmp_path: Path) -> None:
    record = tmp_path / "record"
    record.mkdir()
    bindir = tmp_path / "venv-bin"
    bindir.mkdir()
    _fake_agent_room(bindir / "agent-room", record)
    env = {"PATH": f"{bindir}:{_bare_path(tmp_path)}"}
    result = _launch("Stop", env)
    assert result.returncode == 0, result.stderr
    assert (record / "argv").read_text(encoding="utf-8").splitlines() == ["hook", "Stop"]
    assert (record / "stdin").read_bytes() == PAYLOAD


def _console_script(path: Path, head: str, call: str) -> Path:
    """An installed ``agent-room`` as installers write it: ``head``, then the entry point."""
    path.write_text(
        f"{head}\n# -*- coding: utf-8 -*-\nimport sys\nfrom agent_room.cli import main\n"
        f"if __name__ == '__main__':\n    sys.exit({call})\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def _hook_env(tmp_path: Path, script: Path) -> dict[str, str]:
    return {
        "PATH": _bare_path(tmp_path),
        "HOME": str(tmp_path),
        "AGENT_ROOM_BIN": str(script),
        "AGENT_ROOM_HOME": str(tmp_path / "room"),
        "AGENT_ROOM_NAME": "backend",
    }


def _registered(tmp_path: Path, result: subprocess.CompletedProcess[bytes]) -> None:
    """The SessionStart ran: registered @backend and said so, nothing in the error log."""
    assert (result.returncode, result.stderr) == (0, b"")
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "You are @backend" in context
    assert not (tmp_path / "room" / "errors.log").exists()


def test_the_launcher_runs_an_installed_console_scripts_entry_point_itself(
    tmp_path: Path,
) -> None:
    """Whatever else the installer's script loads first (pip before 25 loads ``re``,
    milliseconds of every hook) is skipped; the agent's working directory stays off the
    module path (a folder there named like a module must not be loaded)."""
    script = _console_script(
        tmp_path / "agent-room", f"#!{sys.executable}", "'the installer script ran'"
    )
    project = tmp_path / "project"
    (project / "agent_room").mkdir(parents=True)
    (project / "agent_room" / "__init__.py").write_text("raise SystemExit('decoy')\n")
    result = subprocess.run(
        [_sh(), str(LAUNCHER), "SessionStart"],
        input=PAYLOAD, env=_hook_env(tmp_path, script), cwd=project,
        capture_output=True, timeout=30, check=False,
    )  # fmt: skip
    _registered(tmp_path, result)


def test_the_launcher_runs_a_script_through_another_interpreter_as_it_is(
    tmp_path: Path,
) -> None:
    """pip's form for an interpreter path too long for ``#!``: sh, then Python."""
    head = f"#!/bin/sh\n'''exec' \"{sys.executable}\" \"$0\" \"$@\"\n' '''"
    script = _console_script(tmp_path / "agent-room", head, "main()")
    _registered(tmp_path, _launch("SessionStart", _hook_env(tmp_path, script)))


def test_the_manifest_names_the_project_as_author() -> None:
    manifest = _load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "agent-room"
    assert manifest["version"] == "0.1.0"
    assert manifest["description"].strip()
    author = manifest["author"]
    assert isinstance(author, dict)
    assert isinstance(author.get("name"), str)
    assert author["name"].strip()
    text = json.dumps(manifest).lower()
    assert not [name for name in SEED_PEOPLE if name in text]


def test_no_seed_author_names_anywhere_in_the_plugin() -> None:
    for path in sorted(PLUGIN.rglob("*")):
        if path.is_file():
            text = path.read_text(encoding="utf-8").lower()
            assert not [name for name in SEED_PEOPLE if name in text], path


def test_plugin_dir_in_a_checkout_is_the_top_level_folder() -> None:
    from agent_room.plugin import plugin_dir

    assert plugin_dir() == PLUGIN


def test_plugin_dir_without_any_plugin_folder_is_a_room_error(tmp_path: Path) -> None:
    shutil.copytree(
        REPO / "agent_room",
        tmp_path / "agent_room",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    code = (
        "from agent_room.turn.core.errors import RoomUnavailable\n"
        "from agent_room.plugin import plugin_dir\n"
        "try:\n    plugin_dir()\n"
        "except RoomUnavailable as exc:\n    print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,  # not the checkout: the current directory comes first on sys.path
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith("the agent-room plugin folder is missing")


@pytest.mark.slow
def test_the_wheel_ships_the_plugin_inside_the_package(tmp_path: Path, wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        infos = {info.filename: info for info in archive.infolist()}
        for name in PLUGIN_FILES:
            assert f"agent_room/_plugin/{name}" in infos, name
        launcher = infos["agent_room/_plugin/bin/agent-room-hook"]
        assert (launcher.external_attr >> 16) & 0o111 == 0o111
        shipped = json.loads(archive.read("agent_room/_plugin/hooks/hooks.json"))
        assert shipped == _load(PLUGIN / "hooks" / "hooks.json")
        archive.extractall(tmp_path / "site")

    # unpacked as a site-packages would hold it, the package finds its own copy
    code = "from agent_room.plugin import plugin_dir; print(plugin_dir())"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,  # not the checkout: the current directory comes first on sys.path
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(found.stdout.strip()) == (tmp_path / "site" / "agent_room" / "_plugin").resolve()


def test_the_skill_teaches_the_sender_identity_chain() -> None:
    """Seed 004: the sender is found by env > pane > argument; the skill says so, in that
    order (``tests/room/test_bus.py`` holds the room to the same order)."""
    skill = (PLUGIN / "skills" / "agent-room" / "SKILL.md").read_text()
    start = skill.index("## Who you are (the sender)")
    section = skill[start : skill.index("\n## ", start + 1)]
    order = [section.index("1. **`$AGENT_ROOM_NAME`**"), section.index("2. **Your tmux pane**")]
    order.append(section.index("3. **`--as NAME`**"))
    assert order == sorted(order)
    assert "refused" in section


def test_the_launcher_steps_aside_for_the_rooms_server_only_while_it_serves(
    tmp_path: Path,
) -> None:
    """An agent the room started sends its turns' events to the room's server over HTTP:
    the command hook hands them on only when that server is not serving (its process, by
    start time), and always hands on the events the server does not take."""
    from agent_room.room.access import HTTP_EVENTS

    record = tmp_path / "record"
    record.mkdir()
    fake = _fake_agent_room(tmp_path / "my-agent-room", record)
    room = tmp_path / "room"
    (room / "mcp").mkdir(parents=True)
    room.chmod(0o700)
    serving = room / "mcp" / "serving"
    stat = Path(f"/proc/{os.getpid()}/stat").read_text().rpartition(")")[2].split()
    env = {
        "PATH": _bare_path(tmp_path),
        "AGENT_ROOM_BIN": str(fake),
        "AGENT_ROOM_HOME": str(room),
        "AGENT_ROOM_HOOKS_HTTP": "1",
    }

    def handed(event: str) -> bool:
        (record / "argv").unlink(missing_ok=True)
        assert _launch(event, env).returncode == 0
        return (record / "argv").exists()

    serving.write_text(f"{os.getpid()} {stat[19]}\n")  # this process serves
    for event in HTTP_EVENTS:
        assert not handed(event), event
    assert handed("SessionStart")  # registration is the command hook's
    serving.write_text(f"{os.getpid()} {int(stat[19]) + 1}\n")  # a reused pid
    assert handed("Stop")
    serving.unlink()  # nothing serves
    assert handed("UserPromptSubmit")
    serving.write_text(f"{os.getpid()} {stat[19]}\n")
    assert handed("Stop") is False
    assert handed("Stop") is False
    del env["AGENT_ROOM_HOOKS_HTTP"]  # an agent without the HTTP hooks
    assert handed("Stop")


def test_the_launcher_lists_the_http_events_of_room_access() -> None:
    from agent_room.room.access import HTTP_EVENTS

    text = LAUNCHER.read_text(encoding="utf-8")
    assert f"        {' | '.join(HTTP_EVENTS)})\n" in text
