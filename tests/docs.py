"""The documentation's code blocks, read as the site prints them.

The convention: a fenced block whose info string holds ``title="example"`` is shown, not
run (material draws the title over it). Every other block is run by a test: today the
README's quick start, which the newcomer tier (``tests/newcomer``) runs command by command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
EXAMPLE = 'title="example"'


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its info string and its lines."""

    path: Path
    line: int
    section: str
    info: str
    lines: tuple[str, ...]

    @property
    def example(self) -> bool:
        """Marked as an example: shown, not run."""
        return EXAMPLE in self.info


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the heading it stands under."""
    found: list[Block] = []
    section = ""
    fence: str | None = None
    info, start = "", 0
    body: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence, info, start, body = match.group(1), match.group(2).strip(), number, []
        elif fence is not None and line.strip() == fence:
            found.append(Block(path, start, section, info, tuple(body)))
            fence = None
        elif fence is not None:
            body.append(line)
        elif line.startswith("#"):
            section = line.lstrip("#").strip()
    return found


def pages() -> list[Path]:
    """The README and every page of the site."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def quick_start() -> list[str]:
    """The README's quick start: its commands, one per line, as printed (comments off)."""
    runnable = [b for b in blocks(REPO / "README.md") if b.section == "Quick start"]
    runnable = [b for b in runnable if not b.example]
    commands = []
    for block in runnable:
        for line in block.lines:
            command = line.split("  #", 1)[0].strip()
            if command:
                commands.append(command)
    return commands
