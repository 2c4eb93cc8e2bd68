"""Two hosts of one room, each running its own ``agent-room watch``: each watch's memory
worker holds its host's lease and reads its own host's transcripts; a handover from an
agent on one host is approved with its context from the other."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_room.room.memory import PROBLEM
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.store import memory as store_memory
from agent_room.workers.memory import memory_lease
from tests.conftest import Cli
from tests.poll import wait_for
from tests.room.conftest import register

TRANSCRIPT = Path(__file__).parent.parent / "fixtures" / "transcripts"
EXCERPT = "spotter_excerpt_turn_end_compact.jsonl"
HOSTS = ("laptop", "devbox")


@pytest.fixture
def room(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Room]:
    """The room, with @web on the laptop and @api on devbox (each its own transcript)."""
    for host, name in zip(HOSTS, ("web", "api"), strict=True):
        path = tmp_path / host / "session.jsonl"
        path.parent.mkdir()
        shutil.copy(TRANSCRIPT / EXCERPT, path)
        monkeypatch.setenv("AGENT_ROOM_HOST", host)
        opened = Room.open({"AGENT_ROOM_HOME": str(cli.home)})
        register(opened, name, transcript_path=str(path))
        opened.close()
    monkeypatch.delenv("AGENT_ROOM_HOST")
    opened = Room.open({"AGENT_ROOM_HOME": str(cli.home)})
    yield opened
    opened.close()


@pytest.fixture
def watches(cli: Cli, room: Room) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """Each host's ``agent-room watch``."""
    with contextlib.ExitStack() as running:
        yield {
            host: running.enter_context(cli.watching({"AGENT_ROOM_HOST": host})) for host in HOSTS
        }


def _held_by(room: Room, host: str, pid: int) -> bool:
    lease = room.store.lease(memory_lease(host))
    return lease is not None and lease["pid"] == pid and lease["expires_at"] > time.time()


def test_each_hosts_watch_reads_its_transcripts_and_contexts_cross_hosts(
    cli: Cli, room: Room, watches: dict[str, subprocess.Popen[bytes]]
) -> None:
    wait_for(
        lambda: all(_held_by(room, host, proc.pid) for host, proc in watches.items()),
        timeout=20,
        what="both hosts' memory leases held at once, each by its host's watch",
    )
    wait_for(
        lambda: all(store_memory.cursor(room.store, s) for s in ("s-web", "s-api")),
        timeout=20,
        what="both transcripts read",
    )
    sent = cli(
        "send", "@web", "--handover", "--changed", "traced", "--todo", "check the hooks_controller",
        name="api", env={"AGENT_ROOM_HOST": "devbox"},
    )  # fmt: skip
    assert sent.code == 0, sent
    handover = int(sent.out.strip())
    approved = cli("approve", str(handover), env={"AGENT_ROOM_HOST": "laptop"})
    assert approved.code == 0, approved
    body = room.store.message(handover)
    assert body is not None
    assert "## Context from @api's session" in body["body"]
    assert "hooks_controller.ex" in body["body"]
    assert not [e for e in audit_events(room) if e.kind == PROBLEM]
