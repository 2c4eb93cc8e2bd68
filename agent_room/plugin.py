"""Where the Claude Code plugin lives: shipped in the package, or the checkout's folder.

A wheel carries the top-level ``plugin/`` folder as ``agent_room/_plugin`` (see
``setup.py``); an editable install has no copy and uses the checkout's ``plugin/`` next to
the package. Standard library and ``agent_room.core`` only: the launcher and the CLI ask
for this path on their fast paths.
"""

from __future__ import annotations

from pathlib import Path

from agent_room.core.errors import RoomUnavailable

MANIFEST = Path(".claude-plugin", "plugin.json")
"""The file that makes a folder a Claude Code plugin, relative to the plugin folder."""


def plugin_dir() -> Path:
    """The plugin folder to pass to ``claude --plugin-dir``, as an absolute path."""
    package = Path(__file__).resolve().parent
    candidates = (package / "_plugin", package.parent / "plugin")
    for folder in candidates:
        if (folder / MANIFEST).is_file():
            return folder
    looked = ", ".join(str(folder) for folder in candidates)
    raise RoomUnavailable(
        f"the agent-room plugin folder is missing (looked in {looked}); reinstall agent-room"
    )


def claude_flags() -> tuple[str, ...]:
    """The arguments every Claude Code the room starts gets (a launch and a resume alike):
    the plugin, whose hooks register the session, and leave to run ``agent-room``."""
    # `--allowedTools X` would swallow the arguments after it (it takes several)
    return ("--plugin-dir", str(plugin_dir()), "--allowedTools=Bash(agent-room:*)")
