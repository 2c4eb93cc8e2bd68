"""How the room starts Codex CLI and Gemini CLI so that they are in the room from their
first prompt, without touching the user's own configuration and without a trust prompt.

Codex reads everything it needs from ``-c`` overrides on its command line: the room's
hooks, their trust (the hash Codex itself would write after "Trust all", so no review
screen), the cwd as a trusted project (no folder-trust screen), the room's folder as a
writable root of the sandbox (so ``agent-room send`` can store a message), no login
shells for its commands (a login shell's profile resets PATH, and ``agent-room`` is
found on the PATH the room started it with), the paste-burst
heuristic off (it turns a quick Enter into a newline) and ``--no-daemon``: the shared
daemon runs every session's hooks with the environment of the first pane it served.

Gemini takes no settings on its command line, and its system settings layer
(``GEMINI_CLI_SYSTEM_SETTINGS_PATH``) must be owned by root. So the room gives each Gemini
agent its own ``GEMINI_CLI_HOME``: a folder in the room whose ``.gemini`` links to every
entry of the user's ``~/.gemini`` (credentials, sessions, history stay where they are)
except ``settings.json``, which is the user's settings with the room's merged in: its
hooks, session retention off (the cleanup deletes a resumed session's files, see README)
and a policy file that lets ``agent-room`` run without a dialog (``tools.allowed`` would
deny every other command). ``GEMINI_CLI_TRUST_WORKSPACE`` trusts the cwd for that session
only (hooks load only in trusted folders). Pure: the caller writes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from agent_room.turn.core.clients import CODEX, GEMINI

MCP_SERVER = "agent-room"
"""The name the room's MCP server has in every client (its tools: ``mcp__agent-room__...``)."""
MCP_TOKEN_VAR = "AGENT_ROOM_MCP_TOKEN"  # noqa: S105 - a variable's name
"""The variable holding the agent's secret, named (never copied) in the clients' settings."""

HookCommand = Callable[[str], str]
"""The shell command a client runs for one of its hook events."""

CODEX_TIMEOUTS = {"SessionEnd": 3, "Interrupt": 3}
"""Seconds; Codex clamps these two events to 3 s. The others get ``HOOK_TIMEOUT``."""
HOOK_TIMEOUT = 5
CODEX_OVERRIDES_FILE = "/<session-flags>/config.toml"
"""Where Codex says hooks given with ``-c`` come from, in its hook trust keys."""
GEMINI_POLICY = """\
# agent-room: the agent may run `agent-room ...` (send, inbox ...) without a dialog
[[rule]]
toolName = "run_shell_command"
commandPrefix = "agent-room"
decision = "allow"
priority = 100
"""
"""A policy rule file (Gemini's ``tools.allowed`` would deny every other command)."""


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text)


def codex_trusted_hash(event: str, command: str, timeout: int) -> str:
    """The hash Codex records when the user trusts one command hook: sha256 over the
    compact, sorted-key JSON of the event's normalised handler group."""
    group = {
        "event_name": _snake(event),
        "hooks": [{"async": False, "command": command, "timeout": timeout, "type": "command"}],
    }
    blob = json.dumps(group, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()


def codex_args(
    hook_command: HookCommand,
    *,
    cwd: str,
    room: str,
    user: Mapping[str, Any] | None = None,
    tui: bool = True,
    mcp_url: str | None = None,
) -> list[str]:
    """The arguments that put a Codex TUI (a launch or a resume; ``tui=False``: a
    ``codex exec`` run) in the room; with ``mcp_url``, the room's tools (``MCP_SERVER``,
    the secret read from ``MCP_TOKEN_VAR``).

    ``user`` is the user's own ``config.toml``: an override replaces a whole table, so
    the hooks the user trusted and the writable roots the user gave are carried over.
    """
    user = user or {}
    args = ["--no-daemon", "-c", "tui.disable_paste_burst=true"] if tui else []
    args += ["-c", "allow_login_shell=false"]
    args += ["-c", f"projects={{{_toml(cwd)}={{trust_level={_toml('trusted')}}}}}"]
    roots = _table(user, "sandbox_workspace_write").get("writable_roots")
    given = (
        [r for r in roots if isinstance(r, str) and r != room] if isinstance(roots, list) else []
    )
    args += [
        "-c",
        f"sandbox_workspace_write.writable_roots=[{','.join(map(_toml, [*given, room]))}]",
    ]
    trusted = [
        f"{_toml(key)}={{trusted_hash={_toml(entry['trusted_hash'])}}}"
        for key, entry in _table(user, "hooks", "state").items()
        if isinstance(entry, Mapping) and isinstance(entry.get("trusted_hash"), str)
    ]
    for event in CODEX.events:
        command = hook_command(event)
        timeout = CODEX_TIMEOUTS.get(event, HOOK_TIMEOUT)
        handler = f"{{type={_toml('command')},command={_toml(command)},timeout={timeout}}}"
        args += ["-c", f"hooks.{event}=[{{hooks=[{handler}]}}]"]
        key = f"{CODEX_OVERRIDES_FILE}:{_snake(event)}:0:0"
        value = codex_trusted_hash(event, command, timeout)
        trusted.append(f"{_toml(key)}={{trusted_hash={_toml(value)}}}")
    args += ["-c", "hooks.state={" + ",".join(trusted) + "}"]
    if mcp_url is not None:
        # approved: the room's own tools (a dialog per send would stall the agent)
        server = (
            f"{{url={_toml(mcp_url)},bearer_token_env_var={_toml(MCP_TOKEN_VAR)},"
            f"default_tools_approval_mode={_toml('approve')}}}"
        )
        args += ["-c", f"mcp_servers.{MCP_SERVER}={server}"]
    return args


def _table(data: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    """The table at ``path`` in parsed TOML, or an empty one."""
    for key in path:
        found = data.get(key)
        data = found if isinstance(found, Mapping) else {}
    return data


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in: tables recursively, lists joined without repeats."""
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = _merge(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            merged[key] = [*old, *(v for v in value if v not in old)]
        else:
            merged[key] = value
    return merged


def gemini_settings(
    hook_command: HookCommand, base: Mapping[str, Any], policy: str, mcp_url: str | None = None
) -> dict[str, Any]:
    """The settings a Gemini session of the room reads: the user's (``base``) with the
    room's merged in (lists joined, so the user's own hooks still run); ``policy`` is
    the path of the file holding ``GEMINI_POLICY``; with ``mcp_url``, the room's tools
    (trusted: they are the room's own, and a dialog per send would stall the agent; the
    secret stays a reference to ``MCP_TOKEN_VAR``, which Gemini expands)."""
    hooks = {
        event: [
            {
                "matcher": "*",
                "hooks": [
                    {
                        "type": "command",
                        "name": f"agent-room-{event}",
                        "command": hook_command(event),
                        "timeout": HOOK_TIMEOUT * 1000,
                    }
                ],
            }
        ]
        for event in GEMINI.events
    }
    ours = {
        "hooks": hooks,
        "general": {"sessionRetention": {"enabled": False}},
        "policyPaths": [policy],
    }
    if mcp_url is not None:
        ours["mcpServers"] = {
            MCP_SERVER: {
                "httpUrl": mcp_url,
                "headers": {"Authorization": f"Bearer ${{{MCP_TOKEN_VAR}}}"},
                "trust": True,
            }
        }
    return _merge(base, ours)


def gemini_env(gemini_home: str) -> dict[str, str]:
    """The environment a Gemini session of the room starts with."""
    return {"GEMINI_CLI_HOME": gemini_home, "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def ci_markers(kind: str, environ: Mapping[str, str]) -> list[str]:
    """The variables to remove from a ``kind`` session's environment.

    Gemini CLI takes ``CI``, ``CONTINUOUS_INTEGRATION`` or any ``CI_*`` variable (its
    UI library's ``is-in-ci``) for a non-interactive run and exits at once instead of
    opening its prompt, so an agent started from a CI job or a shell that exports them
    would end before its first turn.
    """
    if kind != "gemini":
        return []
    return sorted(
        var for var in environ if var in {"CI", "CONTINUOUS_INTEGRATION"} or var.startswith("CI_")
    )


def resume_args(kind: str, session_id: str) -> list[str]:
    """What resumes a session of ``kind`` (before the launch arguments)."""
    if kind == "codex":
        return ["resume", session_id]
    return ["--resume", session_id]
