"""``core.files``: a file another process could have replaced is read without blocking,
only if it is a regular file, and only up to a bound. Each check runs in a thread with a
deadline: the old plain reads blocked for ever on a FIFO."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_room.turn.core.files import NotRegular, TooLarge, open_regular, read_regular


def _within(seconds: float, call: Callable[[], object]) -> BaseException | object:
    """What ``call`` returned or raised, failing the test if it did not end in time."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"{call} blocked"
    return outcome[0]


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    found = _within(5, lambda: read_regular(fifo, 100))
    assert isinstance(found, NotRegular)
    assert found.strerror == "a FIFO, not a regular file"


def test_a_device_behind_a_link_is_refused_unread(tmp_path: Path) -> None:
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    found = _within(5, lambda: read_regular(link, 100))
    assert isinstance(found, NotRegular)
    assert "character device" in str(found.strerror)
    with pytest.raises(OSError, match="Too many levels of symbolic links"):
        open_regular(link, follow=False)


def test_a_file_past_its_bound_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 101)
    with pytest.raises(TooLarge):
        read_regular(big, 100)
    assert read_regular(big, 101) == b"x" * 101
