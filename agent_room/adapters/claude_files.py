"""Claude Code's own files, read as they are: its settings (``.claude.json``) and the
small JSON files of its registry. Standard library only, so a command that asks one
question of them (``start``: is this folder trusted?) loads nothing else."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from agent_room.turn.core.files import read_regular

ENTRY_LIMIT = 64 * 1024
"""A registry file larger than this is not a client's."""

CONFIG_LIMIT = 64 * 1024 * 1024
"""The client's ``.claude.json`` (it keeps each project's history there) read at most."""


def trusted(environ: Mapping[str, str], folder: Path) -> bool | None:
    """Whether Claude Code trusts ``folder`` (it, or a folder above it, was answered yes
    at its trust question); None when its settings cannot be read.

    Undocumented and version-specific (``projects[PATH].hasTrustDialogAccepted`` in
    ``~/.claude.json``, or in ``$CLAUDE_CONFIG_DIR``): used only to warn that an agent
    will wait at the question, never to decide anything."""
    given = environ.get("CLAUDE_CONFIG_DIR")
    home = Path(given) if given else Path(environ.get("HOME") or Path.home())
    config = read_json(home / ".claude.json", CONFIG_LIMIT)
    if not isinstance(config, dict) or not isinstance(config.get("projects"), dict):
        return None
    projects = config["projects"]
    for place in (folder, *folder.parents):
        entry = projects.get(str(place))
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
    return False


def read_json(path: Path, limit: int = ENTRY_LIMIT) -> object:
    """A JSON file of the client's, or None when absent, not a plain file (a FIFO planted
    in its place), larger than ``limit`` or half-written (read again next time)."""
    try:
        raw = read_regular(path, limit, follow=False)
    except OSError:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None
