"""A hook that could not write tries again, briefly: a lock that passes within the hook's
budget loses nothing; one that does not is logged, within the budget (a lost hook is
then healed by the deliverer, see ``tests/tmux/test_heal_tmux.py``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agent_room.room.service import Room
from agent_room.turn.hooks import HOOK_BUDGET, SESSION_END_BUDGET
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite import SqliteStore
from tests.faults import write_lock_held
from tests.hooks.conftest import (
    Hook,
    fixture_payload,
    one_logged_line,
    only_the_log_beside,
    room_rows,
)
from tests.pgcluster import Cluster

START = 1.0
"""A hook process's start, on a loaded machine, beside its budget."""


@pytest.fixture
def busy(hook: Hook, room_home: Path) -> str:
    """A registered session in the middle of a turn; its id."""
    payload = fixture_payload("claude-code-2.1.330/hook-UserPromptSubmit.json")
    hook("SessionStart", fixture_payload("claude-code-2.1.330/hook-SessionStart-startup.json"))
    hook("UserPromptSubmit", payload)
    return str(payload["session_id"])


def _state(home: Path, session_id: str) -> str:
    room = Room.open({"AGENT_ROOM_HOME": str(home)})
    try:
        row = room.store.session(session_id)
        assert row is not None
        return str(row["state"])
    finally:
        room.close()


@pytest.mark.sqlite
def test_a_lock_that_passes_within_the_budget_loses_no_stop(
    hook: Hook, room_home: Path, busy: str
) -> None:
    assert _state(room_home, busy) == "busy"
    with write_lock_held(room_home / "room.db", 3.4):  # past one attempt's busy timeout
        code, out, err = hook("Stop", fixture_payload("claude-code-2.1.330/hook-Stop.json"))
    assert (code, out, err) == (0, None, "")
    assert _state(room_home, busy) == "idle"
    assert not (room_home / "errors.log").exists()


def test_the_writers_lock_held_past_one_attempt_loses_no_stop_on_either_engine(
    either_engine: Cluster | None, hook: Hook, room_home: Path, busy: str
) -> None:
    """Another connection of the room in a write transaction past the hook's lock
    timeout: the first attempt gives up, the second writes the Stop, on PostgreSQL (the
    room's advisory lock) as on SQLite."""
    del either_engine
    holder = SqliteStore(room_home)
    held = threading.Event()

    def hold() -> None:
        with write_transaction(holder.conn):
            held.set()
            time.sleep(3.4)  # past one attempt's lock timeout (3 s), within the budget

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        code, out, err = hook("Stop", fixture_payload("claude-code-2.1.330/hook-Stop.json"))
        took = time.monotonic() - started
    finally:
        thread.join()
        holder.close()
    assert (code, out, err) == (0, None, "")
    assert took > 3.0  # it waited for the lock: nothing was written past it
    assert _state(room_home, busy) == "idle"
    assert not (room_home / "errors.log").exists()


@pytest.mark.sqlite
@pytest.mark.parametrize(
    ("event", "budget"), [("Stop", HOOK_BUDGET), ("SessionEnd", SESSION_END_BUDGET)]
)
def test_a_lock_past_the_budget_is_given_up_in_time_and_logged(
    hook: Hook, room_home: Path, busy: str, event: str, budget: float
) -> None:
    payload = fixture_payload(
        f"claude-code-2.1.330/hook-{'SessionEnd-other' if event == 'SessionEnd' else 'Stop'}.json"
    )
    before = room_rows(room_home)
    with write_lock_held(room_home / "room.db", budget + 3):
        started = time.monotonic()
        code, out, err = hook(event, payload)
        took = time.monotonic() - started
    assert (code, out, err) == (0, None, "")
    assert budget <= took < budget + START
    line = one_logged_line(room_home)
    assert f"hook {event}" in line
    assert "busy" in line or "locked" in line
    assert room_rows(room_home) == before  # lost, whole: the deliverer heals it
    assert _state(room_home, busy) == "busy"


@pytest.mark.sqlite
def test_a_fault_that_does_not_pass_is_said_at_once(hook: Hook, room_home: Path) -> None:
    """A room that cannot be opened at all (its database a folder) is no lock to wait
    out: the hook logs it at once."""
    room_home.mkdir(mode=0o700)
    (room_home / "room.db").mkdir()
    started = time.monotonic()
    code, out, err = hook(
        "SessionStart", fixture_payload("claude-code-2.1.330/hook-SessionStart-startup.json")
    )
    assert (code, out, err) == (0, None, "")
    assert time.monotonic() - started < START
    assert "room.db" in one_logged_line(room_home)
    assert only_the_log_beside(room_home, "room.db")
    assert not any((room_home / "room.db").iterdir())
