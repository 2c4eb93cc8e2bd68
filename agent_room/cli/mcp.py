"""``agent-room mcp``: the room's tools on stdio (``agent_room.mcp.relay``)."""

from __future__ import annotations

import os

import click

from agent_room.mcp.relay import main


def cmd_mcp() -> int:
    """Relay to the room's server, or serve the tools here."""
    return main(os.environ)


# The command (loaded by cli.app when it runs).


@click.command("mcp")
def mcp_command() -> int:
    """Serve send_message, read_inbox, who, get_session_data, set_timer and ask to the
    agent whose environment this runs in, over MCP on stdio. Where the room's watch serves
    them and the agent has its secret (agent-room start gives both), this process only
    relays to it. See docs/guide/mcp.md."""
    return cmd_mcp()
