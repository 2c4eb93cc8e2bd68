"""What a Codex or Gemini session the room starts (or resumes) needs beside the room's
variables: its arguments and its environment, and for Gemini the settings file it reads.

The hooks run the plugin's ``agent-room-hook`` launcher with ``--client KIND``, so that a
session whose agent-room was uninstalled meanwhile goes on quietly, exactly as Claude
Code's plugin hooks do. Gemini's settings live in the room (one Gemini home per agent
name, see ``core.client_launch``): nothing in the user's own configuration changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import tomllib
from collections.abc import Sequence
from pathlib import Path

from agent_room.core.client_launch import (
    GEMINI_POLICY,
    ci_markers,
    codex_args,
    gemini_env,
    gemini_settings,
    resume_args,
)
from agent_room.plugin import plugin_dir
from agent_room.room.access import ENV_URL, WITH_TOKEN, agent_access
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.files import SETTINGS_LIMIT, read_regular
from agent_room.turn.store.home import ensure_room_dir, open_private

CLIENTS_DIR = "clients"
"""Folder of the room holding what the clients it starts read (Gemini's homes)."""
SETTINGS = "settings.json"
POLICY = "agent-room-policy.toml"


def hook_command(kind: str, event: str) -> str:
    """The shell command a client of ``kind`` runs for ``event``."""
    launcher = shlex.quote(str(plugin_dir() / "bin" / "agent-room-hook"))
    return f"sh {launcher} --client {kind} {event}"


def _user_settings(path: Path) -> dict[str, object]:
    """The user's Gemini settings (none if missing or not plain JSON)."""
    try:
        data = json.loads(read_regular(path, SETTINGS_LIMIT))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def gemini_home(room: str, name: str, environ: dict[str, str], mcp_url: str | None = None) -> str:
    """Make (or refresh) the Gemini home of agent ``name`` in the room; return it.

    Its ``.gemini`` links every entry of the user's, so sessions, credentials and
    history are the user's own; only ``settings.json`` is the room's (rewritten at every
    start). Whatever Gemini created in it itself is left alone.
    """
    user_root = environ.get("GEMINI_CLI_HOME") or environ.get("HOME") or str(Path.home())
    user_dot = Path(user_root, ".gemini")
    home = Path(room, CLIENTS_DIR, f"gemini-{name}")
    dot = home / ".gemini"
    for folder in (home.parent, home, dot):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(0o700)
    try:
        entries = [entry.name for entry in user_dot.iterdir()]
    except OSError:
        entries = []
    for entry in entries:
        link = dot / entry
        if entry == SETTINGS or (link.exists() and not link.is_symlink()):
            continue
        link.unlink(missing_ok=True)
        link.symlink_to(user_dot / entry)
    policy = home / POLICY
    _write(policy, GEMINI_POLICY)
    settings = gemini_settings(
        lambda e: hook_command("gemini", e),
        _user_settings(user_dot / SETTINGS),
        str(policy),
        mcp_url,
    )
    _write(dot / SETTINGS, json.dumps(settings, indent=1))
    return str(home)


def _write(path: Path, text: str) -> None:
    """Write a file of the room (0600, never through a link)."""
    if path.is_symlink():
        path.unlink()
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _codex_config(environ: dict[str, str]) -> dict[str, object]:
    """The user's Codex ``config.toml`` (``$CODEX_HOME``, else ``~/.codex``), or nothing."""
    folder = environ.get("CODEX_HOME") or str(Path(environ.get("HOME") or Path.home(), ".codex"))
    try:
        return tomllib.loads(read_regular(Path(folder, "config.toml"), SETTINGS_LIMIT).decode())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def client_launch(
    kind: str,
    *,
    name: str,
    cwd: str,
    home: str,
    environ: dict[str, str],
    tui: bool = True,
    mcp_url: str | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The arguments (before the user's own) and the environment for a session of ``kind``
    started as ``name`` in ``cwd`` (a launch or a resume alike; ``tui=False``: headless;
    ``mcp_url``: the room's tools, see ``room.access``)."""
    room = ensure_room_dir(home)
    if kind == "codex":
        user = _codex_config(environ)
        hooks = lambda e: hook_command(kind, e)  # noqa: E731
        return codex_args(hooks, cwd=cwd, room=room, user=user, tui=tui, mcp_url=mcp_url), {}
    if kind != "gemini":
        raise BadInput(f"no launch description for agent kind {kind!r}")
    return [], gemini_env(gemini_home(room, name, environ, mcp_url))


def resume_argv(
    kind: str,
    *,
    name: str,
    session_id: str,
    cwd: str,
    home: str,
    environ: dict[str, str],
    binary: str,
    claude_args: Sequence[str] = (),
) -> tuple[str, ...]:
    """The command that resumes a session in the room with the client's program
    ``binary`` (``claude --resume ID`` with ``claude_args``, ``codex resume ID``, ``gemini
    --resume ID``), as ``start`` started it: the room's variables and the agent's own
    secret for the room's tools, and for Codex and Gemini CLI their hooks, trust and
    environment."""
    access = agent_access(home, name)
    if kind == "claude":  # its hooks and tools come with the plugin (``claude_args``)
        extra: Sequence[str] = claude_args
        env: dict[str, str] = {}
    else:
        extra, env = client_launch(
            kind, name=name, cwd=cwd, home=home, environ=environ, mcp_url=access[ENV_URL]
        )
    room_env = {"AGENT_ROOM_NAME": name, "AGENT_ROOM_HOME": home, "AGENT_ROOM_AGENT": kind}
    assigned = [f"{k}={v}" for k, v in {**room_env, **access, **env}.items()]
    unset = [f"-u{var}" for var in ci_markers(kind, environ)]
    resume = resume_args(kind, session_id)
    if kind == "claude":  # its options before --resume, as ``claude --help`` shows them
        return ("env", *unset, *assigned, *WITH_TOKEN, binary, *extra, *resume)
    return ("env", *unset, *assigned, *WITH_TOKEN, binary, *resume, *extra)
