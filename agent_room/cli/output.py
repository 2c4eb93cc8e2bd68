"""What the commands print as data: JSON that is exact and safe on a terminal."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from agent_room.turn.core.printable import printable_json

if TYPE_CHECKING:
    from typing import Any


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON (``core.printable.printable_json``) to stdout."""
    sys.stdout.write(printable_json(data) + "\n")
