"""The delivery worker: nudges idle agents about queued messages, exactly once.

One deliverer is active per room (a lease in the store); any number stand by and take
over when the holder dies. It wakes on changes to the room directory (watchfiles) and
on a short timer (the safety net: events can be lost, receipts time out). Each pass
asks ``core.delivery.decide`` what to do per recipient and does it; the bodies never go
through the keyboard (the recipient's hooks hand them over and receipt them).
"""

from __future__ import annotations

import os
import threading
import uuid

from agent_room.adapters.procfs import read_stat
from agent_room.core.delivery import RECEIPT_TIMEOUT, Action, OpenNudge, decide, settle_for
from agent_room.core.prompts import nudge_text
from agent_room.room import Room

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_room.core.ports import Multiplexer, ProcessProbe
    from agent_room.store.sqlite_base import Row

LEASE = "deliverer"
LEASE_TTL = 3.0
"""A holder that stops renewing for this long is presumed gone."""
SAFETY_INTERVAL = 0.5
"""Seconds between passes when no file event arrives."""


class Deliverer:
    """One deliverer for one room."""

    def __init__(
        self,
        room: Room,
        mux: Multiplexer,
        probe: ProcessProbe,
        *,
        receipt_timeout: float = RECEIPT_TIMEOUT,
        lease_ttl: float = LEASE_TTL,
    ) -> None:
        self.room = room
        self.store = room.store
        self.mux = mux
        self.probe = probe
        self.receipt_timeout = receipt_timeout
        self.lease_ttl = lease_ttl
        self.holder = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        stat = read_stat(os.getpid())
        self.pid_start = stat.start_ticks if stat else None
        self.active = False
        """Whether this deliverer held the lease at its last pass."""
        self._renewed_at = 0.0

    def _hold_lease(self, now: float) -> bool:
        if self.active and now - self._renewed_at < self.lease_ttl / 3:
            return True  # renew only now and then: every write wakes every watcher
        self.active = self.store.acquire_lease(
            LEASE,
            holder=self.holder,
            pid=os.getpid(),
            pid_start=self.pid_start,
            ttl=self.lease_ttl,
            at=now,
            alive=self.probe.is_alive,
        )
        if self.active:
            self._renewed_at = now
        return self.active

    def release(self) -> None:
        """Give the lease up so a stand-by takes over at once."""
        if self.active:
            self.store.release_lease(LEASE, self.holder)
            self.active = False

    def run_once(self) -> bool:
        """One pass over every recipient; False when standing by."""
        now = self.room.clock()
        if not self._hold_lease(now):
            return False
        for target in self.store.delivery_targets():
            self._serve(target, now)
        return True

    def _serve(self, target: Row, now: float) -> None:
        name = str(target["name"])
        queued = self.store.queued(name)
        ids = [int(m["id"]) for m in queued]
        nudge = self.store.open_nudge(name)
        if nudge is not None and not set(nudge["message_ids"]) & set(ids):
            self.store.close_nudge(int(nudge["id"]), "done")  # receipted meanwhile
            nudge = None
        pane = target["pane"]
        socket = target["tmux_socket"]
        refusal = None
        if pane and target["state"] == "idle" and queued:
            refusal = self.mux.typing_refusal(socket, pane, target["pid"], target["pid_start"])
        decision = decide(
            state=str(target["state"]),
            queued=ids,
            open_nudge=None
            if nudge is None
            else OpenNudge(
                message_ids=nudge["message_ids"],
                last_try=nudge["last_try"],
                enters=nudge["enters"],
            ),
            refusal=refusal,
            has_pane=bool(pane),
            now=now,
            receipt_timeout=self.receipt_timeout,
        )
        if decision.action is Action.NUDGE:
            senders = [str(m["sender"]) for m in queued if m["id"] in decision.message_ids]
            text = nudge_text(senders, decision.message_ids)
            self.store.record_nudge(name, target["session_id"], decision.message_ids, text, at=now)
            self.mux.type_line(
                socket,
                pane,
                text,
                settle=settle_for(str(target["agent"])),
                still_safe=self._still_safe(target),
            )
        elif decision.action is Action.ENTER and nudge is not None:
            self.store.nudge_retried(int(nudge["id"]), at=now)
            if nudge["text"] in self.mux.capture(socket, pane):
                self.mux.press_enter(socket, pane)  # typed, perhaps not submitted
            else:  # never typed (the last deliverer died first): type it again
                self.mux.type_line(
                    socket, pane, nudge["text"], settle=settle_for(str(target["agent"]))
                )
        elif decision.action is Action.FAIL and nudge is not None:
            self.store.fail_nudge(int(nudge["id"]), decision.message_ids, decision.note, at=now)
        self.store.set_note(name, decision.note if decision.action is Action.HOLD else "", at=now)

    def _still_safe(self, target: Row) -> Callable[[], bool]:
        def check() -> bool:
            return (
                self.mux.typing_refusal(
                    target["tmux_socket"], target["pane"], target["pid"], target["pid_start"]
                )
                is None
            )

        return check

    def run(
        self,
        stop: threading.Event,
        *,
        debounce: int = 10,
        step: int = 5,
        on_pass: Callable[[bool], None] | None = None,
    ) -> None:
        """Deliver until ``stop`` is set: on every room change, and every half second.

        ``on_pass(active)`` is called after each pass (the console shows whether this
        deliverer holds the lease or stands by).
        """
        from watchfiles import watch

        report = on_pass or (lambda _active: None)
        report(self.run_once())
        try:
            for _changes in watch(
                self.room.home,
                debounce=debounce,
                step=step,
                rust_timeout=int(SAFETY_INTERVAL * 1000),
                yield_on_timeout=True,
                stop_event=stop,
                raise_interrupt=False,
            ):
                report(self.run_once())
        finally:
            self.release()
