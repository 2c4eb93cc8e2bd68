"""Handlers of ``agent-room plugin path|marketplace``: where the Claude Code plugin lives,
and a local marketplace that installs it with Claude Code's own plugin manager."""

from __future__ import annotations

import os

import click

from agent_room.cli.params import Group
from agent_room.plugin import marketplace_dir, plugin_dir


def cmd_plugin_path() -> int:
    """Print the plugin folder, for ``claude --plugin-dir "$(agent-room plugin path)"``."""
    print(plugin_dir())
    return 0


def cmd_plugin_marketplace() -> int:
    """Make the local marketplace and print its folder, for
    ``claude plugin marketplace add "$(agent-room plugin marketplace)"``."""
    print(marketplace_dir(os.environ))
    return 0


# The commands (loaded by cli.app when they run).


@click.group("plugin", cls=Group)
def plugin_command() -> None:
    """The Claude Code plugin shipped with agent-room."""


@plugin_command.command("path")
def _path() -> int:
    """Print the plugin folder (for claude --plugin-dir)."""
    return cmd_plugin_path()


@plugin_command.command("marketplace")
def _marketplace() -> int:
    """Make a local marketplace offering the plugin and print its folder (for claude
    plugin marketplace add)."""
    return cmd_plugin_marketplace()
