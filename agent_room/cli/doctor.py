"""``agent-room doctor``: what the room needs, checked, with how to fix each problem.

tmux and its version, each agent client and its version, the Claude Code plugin
installed, ``agent-room`` on the PATH agents get, the room's permissions, the hooks'
errors and a deliverer running. It reads and asks; it changes nothing, and it makes no
room where there is none.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator, Mapping

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


def _version(argv: list[str]) -> str | None:
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
    said = _version([found, "-V"]) or ""
    match = re.search(r"(\d+)\.(\d+)", said)
    version = (int(match[1]), int(match[2])) if match else (0, 0)
    if version < TMUX_LEAST:
        return Check("tmux", said or "unknown version", "install tmux 3.2 or later")
    return Check("tmux", said)


def _clients(environ: Mapping[str, str]) -> Iterator[Check]:
    from agent_room.demo.room import claude_binary

    try:
        claude: str | None = claude_binary(environ)
    except Exception:  # noqa: BLE001 - not found, said below
        claude = None
    if claude is None:
        yield Check(
            "Claude Code",
            "not found",
            "npm install -g @anthropic-ai/claude-code, or set AGENT_ROOM_CLAUDE",
        )
    else:
        version = _version([claude, "--version"])
        fix = "" if version else f"check that it runs: {claude} --version"
        yield Check("Claude Code", f"{version or 'does not run'} ({claude})", fix)
    for kind, package in (("codex", "@openai/codex"), ("gemini", "@google/gemini-cli")):
        program = environ.get(f"AGENT_ROOM_{kind.upper()}") or shutil.which(kind)
        if program is None:
            hint = f"only for --agent {kind}: npm install -g {package}"
            yield Check(kind.capitalize(), "not installed", hint, needed=False)
            continue
        version = _version([program, "--version"])
        yield Check(kind.capitalize(), f"{version or 'does not run'} ({program})", needed=False)


def _claude_settings(environ: Mapping[str, str]) -> Path:
    config = environ.get("CLAUDE_CONFIG_DIR") or str(Path(environ.get("HOME", "~"), ".claude"))
    return Path(config).expanduser() / "settings.json"


def _plugin(environ: Mapping[str, str]) -> Check:
    from agent_room.core.errors import RoomError
    from agent_room.plugin import plugin_dir

    try:
        folder = plugin_dir()
    except RoomError as exc:
        return Check("plugin", str(exc), "reinstall agent-room")
    try:
        settings = json.loads(_claude_settings(environ).read_text(encoding="utf-8"))
    except (OSError, ValueError):
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
    mine = Path(sys.executable).parent / "agent-room"
    if found is None:
        return Check(
            "agent-room on PATH",
            "not found: the plugin's hooks cannot run it (see errors.log)",
            f"add {mine.parent} to PATH (or install with pipx / uv tool), or set AGENT_ROOM_BIN",
        )
    return Check("agent-room on PATH", found)


def _room(environ: Mapping[str, str]) -> Iterator[Check]:
    from agent_room.core.errors import RoomError
    from agent_room.store.home import DB_NAME, ERROR_LOG, room_home
    from agent_room.store.wake import listening

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
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []
    if lines:
        from agent_room.core.printable import printable

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


def cmd_doctor(_args: argparse.Namespace) -> int:
    """Print every check; exit 1 if something the room needs is missing."""
    environ = os.environ
    checks = [
        _tmux(),
        *_clients(environ),
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
