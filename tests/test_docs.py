"""The documentation keeps its shape: a README a newcomer reads in two minutes, and no
code block that is neither run by a test nor marked as an example (``tests/docs.py``)."""

from __future__ import annotations

from tests.conftest import REPO, Cli
from tests.docs import blocks, pages, quick_start


def test_the_readme_is_short() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 200


def test_every_code_block_is_run_or_an_example() -> None:
    unmarked = [
        f"{b.path.relative_to(REPO)}:{b.line}"
        for path in pages()
        for b in blocks(path)
        if not b.example and not (b.path.name == "README.md" and b.section == "Quick start")
    ]
    assert unmarked == []


def test_the_quick_start_is_about_five_commands() -> None:
    commands = quick_start()
    assert 4 <= len(commands) <= 7, commands
    assert all(c.split()[0] == "agent-room" for c in commands)


def test_the_quick_starts_who_shows_the_columns_who_prints(cli: Cli) -> None:
    """The README's picture of ``who`` has the header ``who`` prints today."""
    (example,) = [
        b
        for b in blocks(REPO / "README.md")
        if b.section == "Quick start" and b.lines and b.lines[0].startswith("NAME")
    ]
    assert cli("join", "api").code == 0
    shown = cli("who")
    assert shown.code == 0, shown.err
    assert example.lines[0].split() == shown.out.splitlines()[0].split()
