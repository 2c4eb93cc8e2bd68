"""Liveness from ``/proc``: a process is its pid and its start time, a zombie is gone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_room.turn import procfs
from tests.poll import wait_for

REST = "4194560 100 0 0 0 1 2 0 0 20 0 1 0"
"""The fields between the terminal's process group and the start time (unread here)."""


def _stat(proc: Path, pid: int, name: str, state: str, start: int) -> None:
    (proc / str(pid)).mkdir(parents=True)
    line = f"{pid} ({name}) {state} 1 {pid} {pid} 34816 {pid} {REST} {start} 1000 250 rest\n"
    (proc / str(pid) / "stat").write_text(line)


@pytest.mark.parametrize(
    ("name", "state", "start", "asked", "alive"),
    [
        ("claude", "S", 500, 500, True),
        ("claude", "R", 500, None, True),  # no start time recorded: the pid alone
        ("claude", "S", 501, 500, False),  # the pid is someone else's now
        ("claude", "Z", 500, 500, False),  # a zombie has ended
        ("claude", "X", 500, 500, False),
        (") Z 1 (", "S", 500, 500, True),  # the name may hold ") Z (": read after the last
    ],
)
def test_a_process_runs_while_its_pid_and_start_time_match(
    tmp_path: Path, name: str, state: str, start: int, asked: int | None, alive: bool
) -> None:
    _stat(tmp_path, 42, name, state, start)
    assert procfs.is_alive(42, asked, proc=str(tmp_path)) is alive
    stat = procfs.read_stat(42, proc=str(tmp_path))
    assert stat is not None
    assert (stat.name, stat.state, stat.start_ticks, stat.tty_nr) == (name, state, start, 34816)


def test_a_missing_or_unreadable_process_is_not_alive(tmp_path: Path) -> None:
    assert procfs.is_alive(7, None, proc=str(tmp_path)) is False
    (tmp_path / "8").mkdir()
    (tmp_path / "8" / "stat").write_text("8 (cut short) S 1\n")
    assert procfs.is_alive(8, None, proc=str(tmp_path)) is False
    assert procfs.read_stat(8, proc=str(tmp_path)) is None


def test_the_real_uid_and_command_of_a_process() -> None:
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert procfs.real_uid(child.pid) == os.getuid()
        # the child runs Python's code until its exec
        wait_for(lambda: procfs.cmdline(child.pid) == ["sleep", "30"], step=0.01)
    finally:
        child.kill()
        child.wait()
    assert procfs.real_uid(child.pid) is None
    assert procfs.cmdline(child.pid) is None
