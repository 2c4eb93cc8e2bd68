"""Where the Claude Code plugin lives: shipped in the package, or the checkout's folder.

A wheel carries the top-level ``plugin/`` folder as ``agent_room/_plugin`` (see
``setup.py``); an editable install has no copy and uses the checkout's ``plugin/`` next to
the package. Standard library and ``agent_room.core`` only: the launcher and the CLI ask
for this path on their fast paths.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from agent_room.turn.core.errors import RoomUnavailable

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
    return (
        "--plugin-dir",
        str(plugin_dir()),
        "--allowedTools=Bash(agent-room:*),mcp__plugin_agent-room_agent-room",
    )


MARKETPLACE = "agent-room"
"""The name of the local marketplace that offers the plugin (``agent-room@agent-room``)."""


def marketplace_dir(environ: Mapping[str, str]) -> Path:
    """A local Claude Code marketplace that offers this install's plugin, made (or
    refreshed) in the user's data folder; for ``claude plugin marketplace add``.

    The marketplace lists one plugin whose folder is a link to this install's plugin, so
    Claude Code reads the plugin of the agent-room installed now, also after an upgrade.
    """
    data = environ.get("XDG_DATA_HOME") or str(Path(environ.get("HOME", "~"), ".local", "share"))
    root = Path(data).expanduser() / "agent-room" / "marketplace"
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True, mode=0o700)
    manifest = json.loads((plugin_dir() / MANIFEST).read_text(encoding="utf-8"))
    catalog = {
        "name": MARKETPLACE,
        "owner": {"name": "agent-room"},
        "plugins": [
            {
                "name": manifest["name"],
                "source": "./agent-room",
                "description": manifest.get("description", ""),
                "version": manifest.get("version", ""),
            }
        ],
    }
    (root / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps(catalog, indent=2) + "\n", encoding="utf-8"
    )
    link = root / "agent-room"
    if link.is_symlink() or link.exists():
        if link.is_symlink() and link.resolve() == plugin_dir():
            return root
        link.unlink()
    link.symlink_to(plugin_dir(), target_is_directory=True)
    return root
