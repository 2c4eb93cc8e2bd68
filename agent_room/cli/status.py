"""``agent-room status`` through the command line (``--help``, a bad option); its common
shapes are read on the turn path (``agent_room.turn.status``)."""

from __future__ import annotations

import argparse
import os

from agent_room.turn.status import print_status


def cmd_status(args: argparse.Namespace) -> int:
    """``agent-room status [--format FORMAT]`` through the full parser."""
    return print_status(args.format, os.environ)
