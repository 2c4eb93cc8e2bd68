"""``room.conf`` is read whole or refused, with the file and the line: a setting it did
not see, or one it cannot follow, would leave this host on a SQLite room of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_room.turn.core.errors import UnsafeRoom
from agent_room.turn.store.engine import database_url
from agent_room.turn.store.roomconf import CONFIG_LIMIT

URL = "postgresql://room@db.example/agentroom"


def _conf(tmp_path: Path, text: str) -> str:
    home = tmp_path / "room"
    home.mkdir(mode=0o700)
    conf = home / "room.conf"
    conf.touch(mode=0o600)
    conf.write_text(text)
    return str(home)


def test_a_setting_past_the_first_64_kib_is_not_passed_over(tmp_path: Path) -> None:
    padding = "# the team's notes\n" * (70 * 1024 // 19)
    home = _conf(tmp_path, f"{padding}database = {URL}\n")
    with pytest.raises(UnsafeRoom, match=rf"room.conf is larger than {CONFIG_LIMIT // 1024} KiB"):
        database_url(home, {})


def test_a_line_across_the_bound_is_refused_not_cut(tmp_path: Path) -> None:
    """The old reader cut the line at 64 KiB and took the start of the URL for the room."""
    line = f"database = {URL}\n"
    padding = "#" * (CONFIG_LIMIT - len(line) // 2 - 1) + "\n"
    home = _conf(tmp_path, padding + line)
    with pytest.raises(UnsafeRoom, match=r"room.conf is larger than"):
        database_url(home, {})


@pytest.mark.parametrize("url", ["sqlite:///tmp/room.db", "sqlite://", "sqlite"])
def test_a_sqlite_url_is_refused_with_its_line(tmp_path: Path, url: str) -> None:
    home = _conf(tmp_path, f"# one setting\ndatabase = {url}\n")
    with pytest.raises(UnsafeRoom, match=r"room.conf line 2: database must be a postgresql://"):
        database_url(home, {})


def test_a_room_conf_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    home = _conf(tmp_path, "")
    (Path(home) / "room.conf").write_bytes(b"# ok\n# caf\xe9\n")
    with pytest.raises(UnsafeRoom, match=r"room.conf line 2: not UTF-8"):
        database_url(home, {})


def test_a_symlink_as_room_conf_is_refused(tmp_path: Path) -> None:
    home = _conf(tmp_path, "")
    conf = Path(home) / "room.conf"
    conf.unlink()
    conf.symlink_to("/dev/zero")
    with pytest.raises(UnsafeRoom, match=r"cannot read .*room.conf"):
        database_url(home, {})
