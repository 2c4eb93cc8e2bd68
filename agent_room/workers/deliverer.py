"""The delivery worker: nudges idle agents about queued messages, exactly once.

One deliverer is active per room (a lease in the store); any number stand by and take
over when the holder dies. It wakes at once when a sender pokes it (``store.wake``), on
changes to the room directory (watchfiles: hooks changing an agent's state), and on a
short timer (the safety net: events can be lost, receipts time out). Each pass first
heals the state of sessions whose hook was lost (``workers.healer``), so that a lost
Stop never leaves messages queued behind a turn that has ended. Each pass
asks ``core.delivery.decide`` what to do per recipient and does it; the bodies never go
through the keyboard (the recipient's hooks hand them over and receipt them).
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_room.core.delivery import (
    RECEIPT_TIMEOUT,
    RETRY_AFTER,
    Action,
    OpenNudge,
    clear_keys_for,
    decide,
    retryable,
    settle_for,
)
from agent_room.core.heal import RECHECK
from agent_room.core.ports import Multiplexer
from agent_room.room.service import Room
from agent_room.turn.core.errors import PaneUnavailable
from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.core.prompts import nudge_text
from agent_room.turn.room.gate import prompt_refusal
from agent_room.turn.store.delivery import DELIVERER_LEASE, deliverer_lease
from agent_room.turn.store.hosts import BEAT, host_seen
from agent_room.workers.guard import Guard
from agent_room.workers.healer import Healer
from agent_room.workers.lease import (
    LEASE_TTL,
    RENEW_INTERVAL,
    STANDBY_INTERVAL,
    Lease,
    LeasedWorker,
)
from agent_room.workers.native import NativeDelivery
from agent_room.workers.waiting import waiting_for
from agent_room.workers.wakeup import ChangePipe, RoomWatch, WakeListener, room_changes

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

LEASE = DELIVERER_LEASE
UNREGISTERED = "not registered by its hooks yet (Codex: at its first prompt)"
"""Why nothing is typed into the pane of an agent ``start`` joined by its pane: its
client may still show a dialog of its own, and its hooks have not spoken."""
SAFETY_INTERVAL = RECHECK
"""Seconds between passes when no file event arrives while something is timed: the
healer looks at a session once per ``RECHECK``, and nothing else the deliverer times is
finer (a receipt waits 3 s, a retry 10 s)."""
REST_INTERVAL = RENEW_INTERVAL
"""Seconds between passes of an active deliverer with nothing timed (nothing queued, no
nudge open, every session idle and its registry watched): as often as its lease is
renewed. Whatever changes wakes it at once: a send's poke, a hook's write to the room."""


def delivery_lease(room: Room) -> str:
    """The lease of the room's deliverer (``store.delivery.deliverer_lease``)."""
    return deliverer_lease(room.store)


class Deliverer(LeasedWorker):
    """One deliverer for one room."""

    lease: Lease
    """Always one: a room's deliverers take turns."""

    def __init__(
        self,
        room: Room,
        mux: Multiplexer,
        probe: ProcessProbe,
        *,
        receipt_timeout: float = RECEIPT_TIMEOUT,
        retry_after: float = RETRY_AFTER,
        lease_ttl: float = LEASE_TTL,
        native: NativeDelivery | None = None,
        room_watch: RoomWatch | None = None,
    ) -> None:
        self.room = room
        self.store = room.store
        self.mux = mux
        self.probe = probe
        self.receipt_timeout = receipt_timeout
        self.retry_after = retry_after
        self.lease = Lease(self.store, delivery_lease(room), probe, ttl=lease_ttl)
        self._seen_at = 0.0
        self.passes = 0
        """Passes made, standing by or not."""
        self.wake = WakeListener(room.home)
        """Pokes from senders; listened to only while holding the lease."""
        self.native = native
        """Claude Code's messaging socket, tried before the pane where a client offers it
        (``workers.native``); None: the pane only."""
        self.healer = Healer(room, native.registry if native is not None else None, mux, probe)
        """Sets right the state of a session whose hook was lost (``core.heal``)."""
        self.room_watch = room_watch
        """The process's one watch of the room; None: ``run`` keeps a watch of its own."""
        self._timed = True
        """Whether the last pass left something timed (see ``next_wait``)."""

    def run_once(self) -> bool:
        """One pass over every recipient; False when standing by."""
        now = self.room.clock()
        self.passes += 1
        if not self.lease.hold(now):
            return False
        if self.store.engine == "postgresql" and now - self._seen_at >= BEAT:
            host_seen(self.store, at=now, pid=os.getpid())  # this host's watcher lives
            self._seen_at = now
        if self.native is not None:
            self.native.begin_pass(now)
        self.healer.run(now)
        served: set[str] = set()
        for target in self.store.delivery_targets():
            served.add(str(target["name"]))
            try:
                if self._serve_native(target, now):
                    continue
                self._serve(target, now)
            except PaneUnavailable as exc:  # the pane went away under us: say so, go on
                self.store.set_note(str(target["name"]), f"tmux: {exc}", at=now)
        for name in set(self.store.notes()) - served:  # delivered meanwhile (at a Stop)
            self.store.set_note(name, "", at=now)
        self._timed = bool(served) or self.healer.closely
        return True

    def next_wait(self) -> float:
        """Seconds until the next pass if nothing wakes this deliverer: every second while
        anything is timed, at a stand-by's pace while standing by, else at rest."""
        if self.standing_by:
            return STANDBY_INTERVAL
        return SAFETY_INTERVAL if self._timed else REST_INTERVAL

    def _serve_native(self, target: Row, now: float) -> bool:
        """Whether the native transport served this recipient (else the pane does)."""
        if self.native is None:
            return False
        return self.native.serve(
            target, now, receipt_timeout=self.receipt_timeout, retry_after=self.retry_after
        )

    def _serve(self, target: Row, now: float) -> None:
        name = str(target["name"])
        ids, failed, sender_of, nudge = waiting_for(self.store, name, self.store.open_nudge(name))
        pane = target["pane"]
        socket = target["tmux_socket"]
        refusal = None
        if pane and target["state"] == "idle" and (ids or retryable(failed, now, self.retry_after)):
            refusal = (
                UNREGISTERED
                if target["pid"] and not target["session_id"]
                else self.mux.typing_refusal(socket, pane, target["pid"], target["pid_start"])
            )
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
            failed=failed,
            retry_after=self.retry_after,
        )
        if decision.action is Action.NUDGE:
            senders = [sender_of[i] for i in decision.message_ids]
            held = prompt_refusal(self.room, name, senders, now)
            if held is not None:  # a spent budget or the turn breaker: no prompt
                self.store.set_note(name, held, at=now)
                return
            text = nudge_text(senders, decision.message_ids)
            self.store.record_nudge(name, target["session_id"], decision.message_ids, text, at=now)
            self._type(target, text)
        elif decision.action is Action.ENTER and nudge is not None:
            if nudge["text"] in self.mux.capture(socket, pane):
                self.mux.press_enter(socket, pane)  # typed, perhaps not submitted
            else:  # never typed (the last deliverer died first): type it again
                self._type(target, str(nudge["text"]))
            self.store.nudge_retried(int(nudge["id"]), at=now)  # counted once made
        elif decision.action is Action.FAIL and nudge is not None:
            self.store.fail_nudge(int(nudge["id"]), decision.message_ids, decision.note, at=now)
        self.store.set_note(name, decision.note if decision.action is Action.HOLD else "", at=now)

    def _type(self, target: Row, text: str) -> None:
        """Type a nudge into the recipient's pane: its input line emptied first (a nudge
        left unsubmitted would prefix this one), the pane checked again before Enter."""
        agent = str(target["agent"])
        self.mux.type_line(
            target["tmux_socket"],
            target["pane"],
            text,
            settle=settle_for(agent),
            still_safe=self._still_safe(target),
            clear=clear_keys_for(agent),
        )

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
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        """Deliver until ``stop`` is set: on a poke, on room changes, and every
        ``next_wait``.

        ``on_pass(active)`` is called after each pass (the console shows whether this
        deliverer holds the lease or stands by); ``on_problem`` hears of a pass that
        failed (the room locked, the disk full ...) and of the first pass that works
        again (``None``), standard error if not given. A failed pass is retried, less
        often while the fault lasts. Room changes come from the process's shared watch
        (``room_watch``), or from a watch of its own.
        """
        guard = Guard("deliverer", self.store, on_problem)
        changed = ChangePipe()
        try:
            wake = self.while_active(changed.signal, stop)
            with room_changes(  # on PostgreSQL: its host's sessions only
                self.room_watch,
                self.room.home,
                stop,
                wake,
                host=self.store.host,
                prompt=self.prompt(stop),
            ):
                self._run(stop, guard, changed, on_pass)
        finally:
            self.wake.close()
            self.healer.close()
            self.release()
            changed.close()

    def _run(
        self,
        stop: threading.Event,
        guard: Guard,
        changed: ChangePipe,
        on_pass: Callable[[bool], None] | None,
    ) -> None:
        """``run``'s passes, each followed by a wait for a poke, a room change or
        ``next_wait``."""
        listener = self.wake
        wake_trouble: str | None = None
        while not stop.is_set():
            try:
                mark = self.store.mark()  # before the pass: what it reads it sees
            except Exception:  # noqa: BLE001 - the pass meets the fault and reports it
                mark = None
            active = guard.run(self.run_once)
            if on_pass is not None and active is not None:
                on_pass(active)
            if self.active:
                trouble = listener.bind()
                if trouble != wake_trouble:  # said once, and once when it is over
                    wake_trouble = trouble
                    guard.report(trouble)
            else:
                listener.close()  # a stand-by: the new holder listens
            if guard.failures:  # wait the fault out: file events do not hurry a retry
                stop.wait(guard.pause(SAFETY_INTERVAL))
                continue
            self._wait(stop, changed, listener, mark, time.monotonic() + self.next_wait())

    def _wait(
        self,
        stop: threading.Event,
        changed: ChangePipe,
        listener: WakeListener,
        mark: tuple[int, int] | None,
        until: float,
    ) -> None:
        """Wait for a poke, a room change, ``stop`` or ``until``. A change made only by
        this deliverer's own writes since ``mark`` (the nudge it recorded, the nudge it
        closed) is waited past: its pass already saw all it did. The room's watch, as it
        ends, wakes every listener: the wait then ends on ``stop``."""
        while True:
            waiting = [changed.fd] + ([listener.fileno()] if listener.fd is not None else [])
            ready, _, _ = select.select(waiting, [], [], max(0.0, until - time.monotonic()))
            if changed.fd in ready:
                changed.drain()
            poked = listener.drain()
            if poked or not ready or time.monotonic() >= until or stop.is_set():
                return
            try:
                if self.store.others_wrote(mark):
                    return
            except Exception:  # noqa: BLE001 - the next pass meets the fault and reports it
                return
