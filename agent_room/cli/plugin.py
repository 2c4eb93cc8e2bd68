"""Handler of ``agent-room plugin path``: where the Claude Code plugin lives."""

from __future__ import annotations

import argparse

from agent_room.plugin import plugin_dir


def cmd_plugin_path(args: argparse.Namespace) -> int:  # noqa: ARG001 - the handler signature
    """Print the plugin folder, for ``claude --plugin-dir "$(agent-room plugin path)"``."""
    print(plugin_dir())
    return 0
