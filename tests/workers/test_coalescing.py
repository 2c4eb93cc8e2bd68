"""Wake-ups coalesced: a burst of the room's changes makes one pass of a worker that can
wait, and no change of the burst goes unread (the last one in the gap's tail included)."""

from __future__ import annotations

import threading

from agent_room.room.service import Room
from agent_room.workers.guard import Guard
from agent_room.workers.wakeup import ChangePipe


class _GapTail(threading.Event):
    """The worker's stop event, whose wait is the gap between two passes: the room
    changes once more just as the gap ends (``change``)."""

    def __init__(self, change: threading.Event) -> None:
        super().__init__()
        self.change = change
        self.gaps = 0

    def wait(self, timeout: float | None = None) -> bool:
        self.gaps += 1
        self.change.set()
        return super().wait(0)


def test_a_change_in_the_gaps_tail_gets_a_pass(room: Room) -> None:
    room_state = [0]
    seen: list[int] = []
    woken = threading.Event()
    late = threading.Event()
    stop = _GapTail(late)

    def one_pass() -> int:
        if late.is_set():  # the change made at the end of the gap
            late.clear()
            room_state[0] += 1
        seen.append(room_state[0])
        if len(seen) == 1:  # a change while the first pass runs
            room_state[0] += 1
            woken.set()
        elif room_state[0] == 2:
            stop.set()
            woken.set()  # as the room's watch does when it ends
        return room_state[0]

    guard = Guard("test", room.store, lambda _problem: None)
    worker = threading.Thread(
        target=guard.poll,
        args=(stop, one_pass, 60.0, lambda _result: None),
        kwargs={"woken": woken, "gap": 0.5},
    )
    worker.start()
    worker.join(timeout=30)
    stop.set()
    woken.set()
    worker.join(timeout=5)
    # the burst (a change during the first pass, one at the end of the gap) made one
    # more pass, which read both
    assert seen == [0, 2]


def test_a_pass_woken_after_a_quiet_while_waits_for_no_gap(room: Room) -> None:
    seen: list[int] = []
    woken = threading.Event()
    late = threading.Event()
    stop = _GapTail(late)

    def one_pass() -> None:
        seen.append(len(seen))
        if len(seen) == 2:
            stop.set()

    def interval() -> float:
        woken.set()  # woken long after: the gap is 0 here
        return 60.0

    guard = Guard("test", room.store, lambda _problem: None)
    worker = threading.Thread(
        target=guard.poll,
        args=(stop, one_pass, interval, lambda _result: None),
        kwargs={"woken": woken, "gap": 0.0},
    )
    worker.start()
    worker.join(timeout=30)
    stop.set()
    worker.join(timeout=5)
    assert seen == [0, 1]
    assert stop.gaps == 0  # no gap asked: the pass came at once


def test_a_change_pipe_drains_with_nothing_waiting() -> None:
    pipe = ChangePipe()
    try:
        pipe.drain()  # nothing signalled: returns at once
        pipe.signal()
        pipe.signal()
        pipe.drain()
        pipe.drain()
    finally:
        pipe.close()
