"""``agent-room doctor``: what the room needs, checked, with how to fix each problem.

tmux and its version, each agent client and its version, the Claude Code plugin
installed, ``agent-room`` on the PATH agents get, the room's permissions, the hooks'
errors and a deliverer running. It reads and asks; it changes nothing, and it makes no
room where there is none.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import click

from agent_room.cli.launcher import NPM_PACKAGES
from agent_room.config.settings import RoomSettings
from agent_room.plugin import plugin_dir
from agent_room.turn.core.errors import RoomError
from agent_room.turn.core.files import SETTINGS_LIMIT, read_regular
from agent_room.turn.core.printable import printable
from agent_room.turn.store.home import DB_NAME, ERROR_LOG, ERROR_LOG_LIMIT, room_home
from agent_room.turn.store.wake import listening

TMUX_LEAST = (3, 2)
"""The oldest tmux the launcher and the deliverer are tested with."""
INSTALL_PLUGIN = (
    'claude plugin marketplace add "$(agent-room plugin marketplace)"'
    " && claude plugin install agent-room@agent-room"
)


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, what was found, how to fix it."""

    what: str
    found: str
    fix: str = ""
    """Empty when all is well; else the command or step that fixes it."""
    needed: bool = True
    """False for what only some rooms need (Codex, Gemini): reported, never failed."""


def _said(argv: list[str]) -> str | None:
    """The first line a program prints, or None when it cannot run or fails."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip().splitlines()
    return text[0] if proc.returncode == 0 and text else None


def _tmux() -> Check:
    found = shutil.which("tmux")
    if found is None:
        return Check("tmux", "not installed", "install tmux 3.2 or later (apt install tmux)")
    said = _said([found, "-V"]) or ""
    match = re.search(r"(\d+)\.(\d+)", said)
    version = (int(match[1]), int(match[2])) if match else (0, 0)
    if version < TMUX_LEAST:
        return Check("tmux", said or "unknown version", "install tmux 3.2 or later")
    return Check("tmux", said)


CLIENTS = (("Claude Code", "claude"), ("Codex", "codex"), ("Gemini", "gemini"))
"""Each client's title and program; only Claude Code is needed."""


@functools.cache
def _npm_bin(path: str | None) -> Path | None:
    """Where ``npm install -g`` puts programs, which may be off the PATH (a user prefix);
    npm is asked once, and only when a client is not on the PATH."""
    npm = shutil.which("npm", path=path)
    prefix = _said([npm, "prefix", "-g"]) if npm else None
    return Path(prefix, "bin") if prefix else None


def _client(title: str, program: str, environ: Mapping[str, str], given: str | None) -> Check:
    """The client ``start`` would run: the program its setting names (``given``), else
    ``program`` on the PATH (both looked up as ``start`` does), so ok here means ``start``
    finds it."""
    needed = program == "claude"
    variable = f"AGENT_ROOM_{program.upper()}"
    found = shutil.which(given or program, path=environ.get("PATH"))
    if found is None and given:
        fix = f"point {variable} at the client, or unset it"
        return Check(title, f"{variable}={given} is not a program", fix, needed)
    if found is None:
        folder = _npm_bin(environ.get("PATH"))
        if folder is not None and os.access(folder / program, os.X_OK):
            fix = f'export PATH="{folder}:$PATH" (and in ~/.bashrc)'
            return Check(title, f"installed in {folder}, which is not on PATH", fix, needed)
        install = f"npm install -g {NPM_PACKAGES[program]}"
        fix = (
            f"{install}, or set {variable}" if needed else f"only for --agent {program}: {install}"
        )
        return Check(title, "not installed", fix, needed)
    version = _said([found, "--version"])
    if version is None:
        return Check(
            title, f"does not run ({found})", f"check that it runs: {found} --version", needed
        )
    return Check(title, f"{version} ({found})", needed=needed)


def _clients(environ: Mapping[str, str], settings: RoomSettings | None) -> Iterator[Check]:
    for title, program in CLIENTS:
        yield _client(title, program, environ, settings.program(program) if settings else None)


def _settings(environ: Mapping[str, str]) -> tuple[Check, RoomSettings | None]:
    """The room's settings (``AGENT_ROOM_*`` and ``room.conf``), and whether they hold."""
    try:
        settings = RoomSettings.load(environ)
    except RoomError as exc:
        return Check("settings", str(exc), "fix that variable or line of room.conf"), None
    return Check("settings", "valid (AGENT_ROOM_* and room.conf)"), settings


def _claude_settings(environ: Mapping[str, str]) -> Path:
    config = environ.get("CLAUDE_CONFIG_DIR") or str(Path(environ.get("HOME", "~"), ".claude"))
    return Path(config).expanduser() / "settings.json"


def _plugin(environ: Mapping[str, str]) -> Check:
    try:
        folder = plugin_dir()
    except RoomError as exc:
        return Check("plugin", str(exc), "reinstall agent-room")
    try:
        settings = json.loads(read_regular(_claude_settings(environ), SETTINGS_LIMIT))
    except (OSError, ValueError, RecursionError):
        settings = {}
    enabled = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    names = [k for k, on in (enabled or {}).items() if on and k.startswith("agent-room@")]
    if names:
        return Check("plugin", f"installed in Claude Code ({names[0]}; {folder})")
    return Check(
        "plugin",
        "not installed in Claude Code (agent-room start loads it anyway)",
        f"for your own claude sessions: {INSTALL_PLUGIN}",
        needed=False,
    )


def _on_path(environ: Mapping[str, str]) -> Check:
    found = shutil.which("agent-room", path=environ.get("PATH"))
    if found is None:
        # the script this runs as (pipx's and uv's link in ~/.local/bin), else the one
        # beside this Python (a venv)
        script = Path(sys.argv[0]).absolute()
        folder = script.parent if script.name == "agent-room" else Path(sys.executable).parent
        return Check(
            "agent-room on PATH",
            "not found: the plugin's hooks cannot run it (see errors.log)",
            f'export PATH="{folder}:$PATH" (and in ~/.bashrc), or set'
            f" AGENT_ROOM_BIN={folder / 'agent-room'}",
        )
    return Check("agent-room on PATH", found)


def _room(environ: Mapping[str, str]) -> Iterator[Check]:
    try:
        home = room_home(environ)
    except RoomError as exc:
        yield Check("room", str(exc), "export AGENT_ROOM_HOME=/an/absolute/path")
        return
    try:
        info = os.lstat(home)
    except FileNotFoundError:
        yield Check("room", f"{home} not made yet (the first join, start or hook makes it)")
        return
    mode = stat.S_IMODE(info.st_mode)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or mode & 0o077:
        yield Check("room", f"{home} is not private (mode {mode:o})", f"chmod 700 {home}")
    else:
        db = "" if Path(home, DB_NAME).exists() else ", no database yet"
        yield Check("room", f"{home} (mode {mode:o}{db})")
    log = Path(home, ERROR_LOG)
    try:
        raw = read_regular(log, 4 * ERROR_LOG_LIMIT, follow=False)
    except OSError:
        raw = b""
    lines = raw.decode("utf-8", "replace").splitlines()
    if lines:
        yield Check(
            "hook errors",
            f"{len(lines)} in {log}; last: {printable(lines[-1])[:160]}",
            f"read {log}, fix the cause, then remove the file",
            needed=False,
        )
    if listening(home):
        yield Check("deliverer", "running")
    else:
        yield Check(
            "deliverer",
            "none running: messages wait",
            "agent-room watch (or the console; start and join start one)",
        )


def cmd_doctor() -> int:
    """Print every check; exit 1 if something the room needs is missing."""
    environ = os.environ
    valid, settings = _settings(environ)
    checks = [
        _tmux(),
        valid,
        *_clients(environ, settings),
        _plugin(environ),
        _on_path(environ),
        *_room(environ),
    ]
    failed = False
    for check in checks:
        mark = "ok  " if not check.fix else ("FIX " if check.needed else "note")
        print(f"{mark} {check.what}: {check.found}")
        if check.fix:
            print(f"     -> {check.fix}")
            failed = failed or check.needed
    return 1 if failed else 0


# The command (loaded by cli.app when they run).


@click.command("doctor")
def doctor_command() -> int:
    """Check tmux, each client (claude, codex, gemini) and its version, the plugin,
    agent-room on the PATH, the room's permissions, the hooks' errors and a deliverer; say
    how to fix each problem. Exit status 1 while something needed is missing."""
    return cmd_doctor()
