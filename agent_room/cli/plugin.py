"""Handlers of ``agent-room plugin path|marketplace``: where the Claude Code plugin lives,
and a local marketplace that installs it with Claude Code's own plugin manager."""

from __future__ import annotations

import argparse
import os

from agent_room.plugin import marketplace_dir, plugin_dir


def cmd_plugin_path(args: argparse.Namespace) -> int:  # noqa: ARG001 - the handler signature
    """Print the plugin folder, for ``claude --plugin-dir "$(agent-room plugin path)"``."""
    print(plugin_dir())
    return 0


def cmd_plugin_marketplace(args: argparse.Namespace) -> int:  # noqa: ARG001
    """Make the local marketplace and print its folder, for
    ``claude plugin marketplace add "$(agent-room plugin marketplace)"``."""
    print(marketplace_dir(os.environ))
    return 0
