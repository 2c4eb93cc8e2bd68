"""``agent-room mcp``: the room's tools on stdio (``agent_room.mcp.relay``)."""

from __future__ import annotations

import argparse
import os

from agent_room.mcp.relay import main


def cmd_mcp(_args: argparse.Namespace) -> int:
    """Relay to the room's server, or serve the tools here."""
    return main(os.environ)
