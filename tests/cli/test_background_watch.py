"""start and join make sure a deliverer runs: a background watch the user can see and
stop, that ends by itself once the room has no agent, and that can be declined."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.cli.background import background_pid
from tests.conftest import Cli, require_tool
from tests.poll import wait_for

ON = {"AGENT_ROOM_WATCH": ""}
"""The suite turns the background watch off everywhere; these tests turn it back on."""


@pytest.fixture
def watched(cli: Cli) -> Iterator[Cli]:
    yield cli
    cli("watch", "--stop")


def test_join_in_a_pane_starts_a_background_deliverer_once(watched: Cli) -> None:
    assert watched("watch", "--status").code == 1
    joined = watched("join", "api", "--pane", "%3", env=ON)
    assert joined.code == 0, joined
    assert "a deliverer runs in the background" in joined.err
    pid = background_pid(str(watched.home))
    assert pid is not None
    status = watched("watch", "--status")
    assert status.code == 0, status
    assert f"deliverer: pid {pid} (the background watch)" in status.out
    again = watched("join", "web", "--pane", "%4", env=ON)
    assert "background" not in again.err  # one deliverer listens already
    assert background_pid(str(watched.home)) == pid
    sent = watched("send", "@web", "hello", name="api")
    assert "no deliverer is running" not in sent.err
    stopped = watched("watch", "--stop")
    assert stopped.err == f"stopped the background watch (pid {pid})\n"
    assert background_pid(str(watched.home)) is None
    assert watched("watch", "--status").code == 1


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_the_background_deliverer_can_be_declined(cli: Cli, how: str) -> None:
    if how == "flag":
        joined = cli("join", "api", "--pane", "%3", "--no-watch", env=ON)
    else:
        joined = cli("join", "api", "--pane", "%3", env={"AGENT_ROOM_WATCH": "off"})
    assert joined.code == 0, joined
    assert "background" not in joined.err
    assert background_pid(str(cli.home)) is None


def test_join_without_a_pane_starts_nothing(cli: Cli) -> None:
    assert "background" not in cli("join", "api", env=ON).err
    assert background_pid(str(cli.home)) is None


def test_the_background_watch_ends_once_no_agent_is_left(watched: Cli) -> None:
    env = {**ON, "AGENT_ROOM_WATCH_IDLE_EXIT": "1"}
    assert watched("join", "api", "--pane", "%3", env=env).code == 0
    pid = _started(watched.home)
    time.sleep(2)
    assert background_pid(str(watched.home)) == pid  # an agent is there: it stays
    assert watched("leave", "api").code == 0
    wait_for(lambda: background_pid(str(watched.home)) is None, timeout=15)
    assert "no agent in the room for a while: stopping" in (watched.home / "watch.log").read_text()


def test_start_joins_a_command_agent_by_its_pane(cli: Cli, tmp_path: Path) -> None:
    require_tool(shutil.which("tmux") is not None, "tmux")
    socket = str(tmp_path / "tmux.sock")
    env = {"AGENT_ROOM_TMUX": socket}
    try:
        argv = ("start", "w1", "--agent", "command", "--detach", "--", "sleep", "600")
        started = cli(*argv, env=env)
        assert started.code == 0, started
        assert "joined the room by its pane" in started.err
        (row,) = json.loads(cli("who", "--json").out)
        assert (row["name"], row["agent"], row["state"]) == ("w1", "command", "idle")
        assert row["pane"].startswith("%")
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], check=False, capture_output=True)


def test_the_background_watch_ends_at_once_when_its_room_is_removed(watched: Cli) -> None:
    assert watched("join", "api", "--pane", "%3", env=ON).code == 0
    pid = _started(watched.home)
    _remove(watched.home)
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), timeout=15)
    assert not watched.home.exists()  # its workers, opening the room again, made none


def _started(home: Path) -> int:
    """The background watch's pid, once it wrote its pid file: ``join`` waits for it to
    listen for ``LISTEN_WAIT`` at most, and a loaded machine can take longer to start it
    (it still starts: the message waits in the room until it delivers)."""
    pid = wait_for(lambda: background_pid(str(home)), timeout=30, what="the background watch")
    assert pid is not None
    return pid


def _remove(home: Path) -> None:
    """Remove the room as a user would: once more if a worker wrote a file into it while
    it was being removed (``rm -rf`` then says the folder is not empty)."""

    def removed() -> bool:
        shutil.rmtree(home, ignore_errors=True)
        return not home.exists()

    wait_for(removed, timeout=5)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def test_a_watch_in_a_terminal_ends_when_its_room_is_removed(cli: Cli) -> None:
    """A watch run by hand says why it stops, and leaves no room made anew behind."""
    assert cli("join", "api", "--pane", "%3").code == 0
    watch = subprocess.Popen(
        [sys.executable, "-m", "agent_room", "watch"],
        env=cli.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watch.stderr is not None
        assert "delivering and linking" in watch.stderr.readline()
        _remove(cli.home)
        try:
            _, said = watch.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            watch.kill()
            raise AssertionError(f"the watch goes on: {watch.communicate()[1]}") from None
    finally:
        watch.kill()
        watch.wait()
    assert watch.returncode == 0
    assert "agent-room: the room was removed: stopping" in said
    assert not cli.home.exists()
