"""The deliverer's actions per recipient: Enter again, give up, retry, clear, re-check.

A scripted multiplexer stands in for tmux (what it refuses and shows is set by the test)
and the room's clock is moved by hand, so every step of a nudge's life is one pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from agent_room.core.delivery import (
    MAX_EXTRA_ENTERS,
    MAX_NUDGES,
    RECEIPT_TIMEOUT,
    RETRY_AFTER,
    settle_for,
)
from agent_room.room.service import Room, connect_long_lived
from agent_room.room.views import audit_events
from agent_room.turn.core.errors import PaneUnavailable
from agent_room.turn.room.delivery import receive
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.workers.deliverer import Deliverer
from tests.fakes import FakeMux
from tests.ui.seed import AliveProbe


class Clock:
    """The room's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class ScriptedMux(FakeMux):
    """The multiplexer port: refuses what ``refusal`` says, shows ``screen``, records."""

    def __init__(self) -> None:
        super().__init__()
        self.refusal: str | None = None
        self.screen = ""
        self.still_safe: list[Callable[[], bool] | None] = []
        self.settles: list[float] = []
        self.enter_fails = False

    def typing_refusal(
        self, socket: str | None, pane: str, agent_pid: int | None, agent_start: int | None
    ) -> str | None:
        return self.refusal

    def type_line(
        self,
        socket: str | None,
        pane: str,
        text: str,
        *,
        settle: float,
        still_safe: Callable[[], bool] | None = None,
        clear: Sequence[str] = (),
    ) -> bool:
        self.calls.append(("type_line", pane, text, tuple(clear)))
        self.still_safe.append(still_safe)
        self.settles.append(settle)
        self.screen += text  # typed: it shows in the input line
        return still_safe is None or still_safe()

    def press_enter(self, socket: str | None, pane: str) -> None:
        if self.enter_fails:
            raise PaneUnavailable("the pane went away")
        self.calls.append(("press_enter", pane))

    def capture(self, socket: str | None, pane: str) -> str:
        return self.screen

    def actions(self) -> list[str]:
        return [str(c[0]) for c in self.calls]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def room(room_home: Path, clock: Clock) -> Iterator[Room]:
    opened = Room(SqliteStore(str(room_home), open_postgres=connect_long_lived), clock=clock)
    opened.join("backend")
    opened.join("frontend", pane="%1")
    yield opened
    opened.close()


@pytest.fixture
def mux() -> ScriptedMux:
    return ScriptedMux()


@pytest.fixture
def deliverer(room: Room, mux: ScriptedMux) -> Iterator[Deliverer]:
    worker = Deliverer(room, mux, AliveProbe())
    yield worker
    worker.release()


def _status(room: Room, message_id: int) -> str:
    row = room.store.message(message_id)
    assert row is not None
    return str(row["status"])


def _kinds(room: Room, message_id: int) -> list[str]:
    return [e.kind for e in audit_events(room) if e.message_id == message_id]


def _nudge(room: Room) -> dict[str, object]:
    nudge = room.store.open_nudge("frontend")
    assert nudge is not None
    return nudge


def _wait_out(clock: Clock, deliverer: Deliverer, seconds: float = RECEIPT_TIMEOUT) -> None:
    clock.now += seconds
    deliverer.run_once()


def test_a_nudge_clears_the_input_line_first(
    room: Room, mux: ScriptedMux, deliverer: Deliverer
) -> None:
    mid = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    assert mux.calls == [
        ("type_line", "%1", f"[agent-room] 1 new message from @backend (#{mid})", ("C-e", "C-u"))
    ]


def test_no_clearing_keys_for_a_kind_not_checked(
    room: Room, mux: ScriptedMux, deliverer: Deliverer
) -> None:
    room.join("scripted", pane="%2", agent="command")
    room.send("backend", "scripted", "hello")
    deliverer.run_once()
    assert [c[3] for c in mux.calls] == [()]


def test_codex_and_gemini_lines_are_cleared_too(
    room: Room, mux: ScriptedMux, deliverer: Deliverer
) -> None:
    room.join("codexer", pane="%2", agent="codex")
    room.join("geminier", pane="%3", agent="gemini")
    room.send("backend", "codexer", "hello")
    room.send("backend", "geminier", "hello")
    deliverer.run_once()
    assert [c[3] for c in mux.calls] == [("C-e", "C-u"), ("C-e", "C-u")]


def test_the_settle_delay_follows_the_agent_kind(
    room: Room, mux: ScriptedMux, deliverer: Deliverer
) -> None:
    room.join("geminier", pane="%3", agent="gemini")
    room.send("backend", "frontend", "hello")
    room.send("backend", "geminier", "hello")
    deliverer.run_once()
    by_pane = {str(c[1]): settle for c, settle in zip(mux.calls, mux.settles, strict=True)}
    assert by_pane == {"%1": settle_for("claude"), "%3": settle_for("gemini")}


def test_the_pane_is_checked_again_just_before_enter(
    room: Room, mux: ScriptedMux, deliverer: Deliverer
) -> None:
    """The check given to ``type_line`` asks the multiplexer again, at the moment of Enter."""
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    (check,) = mux.still_safe
    assert check is not None
    assert check()
    mux.refusal = "the pane is at a shell prompt"  # the agent exited while the text was typed
    assert not check()


def test_an_unreceipted_nudge_gets_enter_again(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    _wait_out(clock, deliverer, RECEIPT_TIMEOUT / 2)
    assert mux.actions() == ["type_line"]  # the receipt is awaited
    _wait_out(clock, deliverer, RECEIPT_TIMEOUT / 2)
    assert mux.actions() == ["type_line", "press_enter"]
    assert _nudge(room)["enters"] == 1


def test_a_nudge_that_never_showed_is_typed_again_safely(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    """The last deliverer died between recording and typing: type it, never bare Enter."""
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    mux.screen = ""
    _wait_out(clock, deliverer)
    assert mux.actions() == ["type_line", "type_line"]
    assert mux.calls[1][3] == ("C-e", "C-u")
    check = mux.still_safe[1]
    assert check is not None
    mux.refusal = "the pane is gone"
    assert not check()


def test_a_retry_is_recorded_only_once_made(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    room.send("backend", "frontend", "hello")
    deliverer.run_once()
    mux.enter_fails = True
    _wait_out(clock, deliverer)
    assert _nudge(room)["enters"] == 0  # the Enter never happened: not counted
    mux.enter_fails = False
    _wait_out(clock, deliverer, 0.0)
    assert _nudge(room)["enters"] == 1


def test_after_the_extra_enters_the_delivery_fails_where_the_operator_sees_it(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    mid = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    for _ in range(MAX_EXTRA_ENTERS):
        _wait_out(clock, deliverer)
    assert mux.actions().count("press_enter") == MAX_EXTRA_ENTERS
    assert _status(room, mid) == "queued"
    _wait_out(clock, deliverer)
    assert _status(room, mid) == "failed"
    assert mux.actions().count("press_enter") == MAX_EXTRA_ENTERS  # no third extra Enter
    assert room.store.open_nudge("frontend") is None
    row = room.store.message(mid)
    assert row is not None
    assert f"no receipt after {MAX_EXTRA_ENTERS + 1} tries" in str(row["failure"])
    assert "message.failed" in _kinds(room, mid)
    assert next(s for s in room.who() if s["name"] == "frontend")["failed"] == 1


def _fail_once(clock: Clock, deliverer: Deliverer) -> None:
    for _ in range(MAX_EXTRA_ENTERS + 1):
        _wait_out(clock, deliverer)


def test_a_failed_delivery_is_retried_once_the_recipient_is_healthy(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    mid = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    _fail_once(clock, deliverer)
    assert _status(room, mid) == "failed"
    typed = mux.actions().count("type_line")
    mux.refusal = "the agent is not in the foreground of its terminal"  # not healthy
    _wait_out(clock, deliverer, RETRY_AFTER)
    assert mux.actions().count("type_line") == typed
    assert _status(room, mid) == "failed"
    mux.refusal = None  # healthy again: idle, the registered agent in its pane
    mux.screen = ""
    _wait_out(clock, deliverer, 0.0)
    assert mux.actions().count("type_line") == typed + 1
    assert mux.calls[-1][3] == ("C-e", "C-u")  # the old, unsubmitted nudge is cleared
    assert _status(room, mid) == "queued"
    assert "message.retried" in _kinds(room, mid)
    assert receive(room, "frontend", [mid]) is not None  # the recipient's hook receipts it
    assert _status(room, mid) == "delivered"


def test_retries_end_after_a_bounded_number_of_nudges(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    mid = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    for _ in range(MAX_NUDGES * 3):
        _fail_once(clock, deliverer)
        _wait_out(clock, deliverer, RETRY_AFTER)
    typed = mux.actions().count("type_line")
    assert typed == MAX_NUDGES
    assert _status(room, mid) == "failed"
    row = room.store.message(mid)
    assert row is not None
    assert row["attempts"] == MAX_NUDGES
    assert f"gave up after {MAX_NUDGES} nudges" in str(row["failure"])
    assert _kinds(room, mid).count("message.retried") == MAX_NUDGES - 1
    assert room.store.delivery_targets() == []  # nothing left to visit on every pass


def test_the_console_flow_shows_a_retry(
    room: Room, mux: ScriptedMux, clock: Clock, deliverer: Deliverer
) -> None:
    from agent_room.room.snapshot import SnapshotReader

    mid = room.send("backend", "frontend", "hello")
    deliverer.run_once()
    _fail_once(clock, deliverer)
    _wait_out(clock, deliverer, RETRY_AFTER)
    flow = [(e.kind, e.message_id) for e in SnapshotReader(room).read().flow]
    assert flow[-3:] == [("sent", mid), ("failed", mid), ("retried", mid)]
