"""Every database fault that reaches the command line is one line and a non-zero exit."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.cli.conftest import one_line_error
from tests.conftest import Cli
from tests.faults import corrupt_data_pages, tiny_disk


@pytest.mark.sqlite
@pytest.mark.parametrize(
    "argv",
    [("who",), ("history",), ("send", "@frontend", "hello"), ("inbox",), ("join", "mobile")],
    ids=["who", "history", "send", "inbox", "join"],
)
def test_corrupt_pages_are_one_line(cli: Cli, room_home: Path, argv: tuple[str, ...]) -> None:
    assert cli("join", "backend").code == 0
    assert cli("join", "frontend").code == 0
    for n in range(20):
        assert cli("send", "@frontend", f"message {n}", name="backend").code == 0
    corrupt_data_pages(room_home / "room.db")
    one_line_error(cli(*argv, name="backend"), None, "malformed")


def test_a_full_disk_is_one_line(tmp_path: Path) -> None:
    with tiny_disk(tmp_path) as disk:
        cli = Cli(disk.where / "room")
        assert cli("join", "backend").code == 0
        assert cli("join", "frontend").code == 0
        # a running process (watch, the console) keeps the room's shared memory in place
        watching = Room.open({"AGENT_ROOM_HOME": str(cli.home)})
        watching.who()
        disk.fill()
        one_line_error(cli("send", "@frontend", "x" * 60_000, name="backend"), None, "full")
        one_line_error(cli("join", "mobile"), None, "full")
        disk.free()
        assert cli("send", "@frontend", "room again", name="backend").code == 0
        assert cli("join", "mobile").code == 0
        watching.close()
