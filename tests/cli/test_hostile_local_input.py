"""Nothing another local process plants is believed, opened blocking or signalled.

Each test is a finding of the hardening round on the landed revision: a FIFO in place
of ``room.conf`` or of a transcript, a ``watch.pid`` naming an unrelated process, a
state file of unbounded size or depth, a registry entry naming another user's process.
Each command runs as a real process with a deadline: a hang fails the test instead of
hanging the run, and memory is capped where the old code read until it ran out.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from agent_room.adapters.claude_native import FileRegistry
from agent_room.adapters.processes import SystemProbe
from agent_room.room.service import Room
from agent_room.store.memory import cursor
from agent_room.turn.procfs import read_stat
from agent_room.turn.store.wake import listening
from tests.cli.conftest import one_line_error
from tests.conftest import FIXTURES, Cli, Result
from tests.poll import wait_for

DEADLINE = 20.0
"""Seconds a command may take here: the old code never returned."""
MEMORY = 1 << 30
"""Bytes of address space a command gets: the old import read /dev/zero until it ran out."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(cli: Cli, *args: str, stdin: bytes = b"", env: Mapping[str, str] | None = None) -> Result:
    """``agent-room ARGS`` with a deadline and capped memory."""
    proc = subprocess.run(
        [sys.executable, "-m", "agent_room", *args],
        input=stdin,
        capture_output=True,
        env=cli.env(env),
        timeout=DEADLINE,
        preexec_fn=_capped,
        check=False,
    )
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def _payload(transcript: Path) -> bytes:
    base = json.loads(
        (FIXTURES / "claude-code-2.1.330" / "hook-SessionStart-startup.json").read_text()
    )
    base.update({"session_id": str(uuid.uuid4()), "transcript_path": str(transcript)})
    return json.dumps(base).encode()


@pytest.fixture
def fifo_agent(cli: Cli, tmp_path: Path, agent_proc: subprocess.Popen[bytes]) -> str:
    """@api, registered by its own SessionStart hook, with a FIFO as its transcript path."""
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    payload = _payload(fifo)
    env = {"AGENT_ROOM_NAME": "api", "CLAUDE_PID": str(agent_proc.pid)}
    assert run(cli, "hook", "SessionStart", stdin=payload, env=env).code == 0
    return str(json.loads(payload)["session_id"])


# -- room.conf ---------------------------------------------------------------------------


def test_a_fifo_as_room_conf_hangs_no_command_and_no_hook(cli: Cli, room_home: Path) -> None:
    room_home.mkdir(mode=0o700, exist_ok=True)
    (room_home / "room.conf").unlink(missing_ok=True)  # the PostgreSQL pass's: replaced
    os.mkfifo(room_home / "room.conf", 0o600)
    who = run(cli, "who")
    one_line_error(who, None, "room.conf", "a FIFO")
    hook = run(cli, "hook", "Stop", stdin=b"{}", env={"AGENT_ROOM_NAME": "api"})
    assert (hook.code, hook.out, hook.err) == (0, "", "")  # a hook never breaks its agent


# -- transcripts -------------------------------------------------------------------------


def test_a_fifo_as_a_transcript_hangs_no_peek(cli: Cli, fifo_agent: str) -> None:
    del fifo_agent
    one_line_error(run(cli, "peek", "api"), None, "transcript", "a FIFO")


def test_a_fifo_as_a_transcript_blocks_no_memory_worker_and_watch_obeys_sigterm(
    cli: Cli, room_home: Path, room: Room, fifo_agent: str
) -> None:
    with cli.watching() as watch:
        wait_for(
            lambda: "a FIFO" in str((cursor(room.store, fifo_agent) or {}).get("problem")),
            timeout=30,
        )
        started = time.monotonic()
        watch.send_signal(signal.SIGTERM)
        watch.wait(timeout=DEADLINE)
        assert time.monotonic() - started < 12


# -- watch.pid ---------------------------------------------------------------------------


def _ticks(pid: int) -> int:
    stat = read_stat(pid)
    assert stat is not None
    return stat.start_ticks


@pytest.mark.parametrize("written", ["pid only", "pid and start time", "another command"])
def test_watch_stop_never_signals_a_process_that_is_not_the_rooms_watch(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes], written: str
) -> None:
    room_home.mkdir(mode=0o700, exist_ok=True)
    pid = agent_proc.pid  # a live process that is not the room's watch
    text = {
        "pid only": f"{pid}\n",
        "pid and start time": f"{pid} {_ticks(pid)}\n",
        "another command": json.dumps(
            {"pid": pid, "start": _ticks(pid), "command": [sys.executable, "-m", "agent_room"]}
        ),
    }[written]
    pid_file = room_home / "watch.pid"
    pid_file.touch(mode=0o600)
    pid_file.write_text(text)
    stopped = run(cli, "watch", "--stop")
    one_line_error(stopped, 1, f"watch.pid names pid {pid}", "not signalled")
    time.sleep(0.3)
    assert agent_proc.poll() is None, "watch --stop signalled an unrelated process"
    assert run(cli, "watch", "--status").code == 1  # nor is it taken for the watch


def test_watch_stop_leaves_a_pid_file_of_a_gone_process_alone(
    cli: Cli, room_home: Path, agent_proc: subprocess.Popen[bytes]
) -> None:
    room_home.mkdir(mode=0o700, exist_ok=True)
    record = {
        "pid": agent_proc.pid,
        "start": _ticks(agent_proc.pid) + 1,
        "command": ["sleep", "600"],
    }
    (room_home / "watch.pid").touch(mode=0o600)
    (room_home / "watch.pid").write_text(json.dumps(record))
    stopped = run(cli, "watch", "--stop")
    assert stopped.code == 0
    assert "no background watch is running" in stopped.err
    assert agent_proc.poll() is None


# -- intercom import ---------------------------------------------------------------------


def test_intercom_import_of_deep_nesting_is_one_line(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text("[" * 500_000)
    one_line_error(run(cli, "intercom", "import", str(state)), 2, "nested too deeply")


def test_intercom_import_of_a_link_to_an_endless_device_is_refused_unread(
    cli: Cli, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    state.symlink_to("/dev/zero")
    one_line_error(run(cli, "intercom", "import", str(state)), 2, "a character device")


def test_intercom_import_of_a_huge_file_is_refused(cli: Cli, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with state.open("wb") as out:
        out.truncate(64 * 1024 * 1024)  # sparse: big to read, nothing on disk
    one_line_error(run(cli, "intercom", "import", str(state)), 2, "larger than")


# -- Claude Code's registry ---------------------------------------------------------------


@pytest.fixture
def foreign() -> Iterator[int]:
    """A live process of another user (``nobody``, started here as root; else PID 1)."""
    if os.getuid() != 0:
        yield 1
        return
    proc = subprocess.Popen(["sleep", "600"], user="nobody")
    yield proc.pid
    proc.kill()
    proc.wait()


def test_a_registry_entry_naming_another_users_process_is_not_an_agent(
    cli: Cli, room: Room, tmp_path: Path, foreign: int, agent_proc: subprocess.Popen[bytes]
) -> None:
    claude = tmp_path / "claude"
    sessions = claude / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    for pid in (foreign, agent_proc.pid):
        entry = {
            "pid": pid,
            "sessionId": str(uuid.uuid4()),
            "cwd": "/srv",
            "procStart": str(_ticks(pid)),
            "status": "idle",
            "kind": "interactive",
        }
        (sessions / f"{pid}.json").write_text(json.dumps(entry))
    listed = {s.pid for s in FileRegistry(claude, SystemProbe()).sessions()}
    assert listed == {agent_proc.pid}  # the user's own process still counts
    who = run(cli, "who", "--json", env={"CLAUDE_CONFIG_DIR": str(claude)})
    assert who.code == 0, who
    assert str(foreign) not in who.out
    assert str(agent_proc.pid) in who.out


# -- wake.fifo ---------------------------------------------------------------------------


@pytest.fixture
def watching(cli: Cli, room: Room, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """``agent-room watch`` on the room, listening on its FIFO; the FIFO and the watch's
    standard error."""
    room.join("api")
    room.join("web")
    err = tmp_path / "watch.err"
    with err.open("wb") as stderr:
        watch = subprocess.Popen(
            [sys.executable, "-m", "agent_room", "watch"],
            env=cli.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    fifo = cli.home / "wake.fifo"
    try:
        wait_for(lambda: listening(str(cli.home)), timeout=30)
        yield fifo, err
    finally:
        watch.send_signal(signal.SIGTERM)
        try:
            watch.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            watch.kill()
            watch.wait()


def test_wake_fifo_replaced_by_a_directory_is_repaired_or_said(
    cli: Cli, watching: tuple[Path, Path]
) -> None:
    fifo, err = watching
    fifo.unlink()
    fifo.mkdir()
    (fifo / "kept").write_text("someone's file: not removed")
    sent = run(cli, "send", "@web", "hello", "--as", "api")
    assert sent.code == 0, sent
    assert "no deliverer is running" not in sent.err  # one runs: it only cannot be poked
    wait_for(lambda: "wake.fifo" in err.read_text(), timeout=15)
    assert "a directory is in its place" in err.read_text()
    assert (fifo / "kept").exists()
    (fifo / "kept").unlink()  # an empty directory: the watch puts its FIFO back
    wait_for(lambda: listening(str(cli.home)), timeout=15)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_plain_file_as_wake_fifo_is_no_deliverer(cli: Cli, room: Room) -> None:
    """Opened for writing, a plain file answers as a listening FIFO would: start and
    join would then never start a deliverer, and send would say one runs."""
    room.join("api")
    room.join("web")
    (cli.home / "wake.fifo").touch(mode=0o600)
    assert not listening(str(cli.home))
    sent = run(cli, "send", "@web", "hello", "--as", "api")
    assert "no deliverer is running" in sent.err
