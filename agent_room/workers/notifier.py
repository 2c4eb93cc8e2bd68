"""The notifier: tells the operator what needs them, through the configured channels.

A background worker with the deliverer's shape (a pass, and a run loop with a stop
event), run inside the console and ``agent-room watch`` under its own lease, so one
process per room speaks; never in a hook. Each pass reads the room's facts
(``store.attention``), lets ``core.attention`` decide what is new and within the rate
limit, and hands that to every channel. What it told goes into the audit log
(``operator.notified``), which is also how a notifier taking over the lease knows what
was told already. A channel that fails is reported and tried again on the next alert;
it never stops the worker or the other channels.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from agent_room.adapters.reach import CommandChannel, DesktopChannel, TmuxChannel
from agent_room.config.notify import NotifySettings
from agent_room.core.attention import (
    Alert,
    NotifyChannel,
    NotifyPolicy,
    NotifyState,
    alerts,
    decide,
)
from agent_room.core.overlaps import overlap_facts
from agent_room.core.worktrees import Git
from agent_room.room.code import CodeTracker
from agent_room.room.service import Room
from agent_room.store import attention
from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite_base import event
from agent_room.workers.guard import Guard, describe
from agent_room.workers.lease import (
    LEASE_TTL,
    RENEW_INTERVAL,
    STANDBY_INTERVAL,
    Lease,
    LeasedWorker,
)
from agent_room.workers.wakeup import RoomWatch, room_changes

LEASE = "notifier"
INTERVAL = 1.0
"""Seconds between passes while something is timed (a dialog waits towards the alert's
threshold, or alerts wait for the rate limit): a person hears within about a second."""
REST_INTERVAL = RENEW_INTERVAL
"""Seconds between passes with nothing timed: as often as the lease is renewed. What
changes in the room wakes the notifier (the room's watch; at most one pass every
``GAP``)."""
GAP = 0.5
"""The shortest time (seconds) between the starts of two passes woken by the room's
changes: a message makes several changes, and a burst of them makes one pass (a person
still hears within about a second)."""
NOTIFIED = "operator.notified"
"""The audit event of one alert told: subject is the agent, data has key, kind, text."""
REMEMBER = 24 * 3600.0
"""How far back a notifier that takes over looks for what was told already."""


class Notifier(LeasedWorker):
    """One notifier for one room."""

    def __init__(
        self,
        room: Room,
        probe: ProcessProbe,
        channels: Sequence[NotifyChannel],
        *,
        policy: NotifyPolicy | None = None,
        use_lease: bool = True,
        on_problem: Callable[[str, str | None], None] | None = None,
        git: Git | None = None,
        room_watch: RoomWatch | None = None,
    ) -> None:
        self.room = room
        self.room_watch = room_watch
        """The process's one watch of the room; None: ``run`` keeps a watch of its own."""
        self._timed = True
        """Whether the last pass left something timed (see ``next_wait``)."""
        self.store = room.store
        self.policy = policy or NotifyPolicy()
        self.channels = list(channels)
        self.lease = Lease(self.store, LEASE, probe, ttl=LEASE_TTL) if use_lease else None
        self.on_problem = on_problem
        """Told ``(channel, problem)`` when a channel fails, ``(channel, None)`` when it
        works again."""
        self.state: NotifyState | None = None
        self.problems: dict[str, str] = {}
        """Each failing channel's last problem."""
        self.tracker = CodeTracker(room, git) if git is not None else None
        """Reads who touches what (``room.code``), for the code alerts."""
        self._code_seen: tuple[int | None, tuple[tuple[str, str, str], ...]] = (None, ())
        """The room's change count at the last read, and what it found."""

    def _told_before(self) -> NotifyState:
        since = self.room.clock() - REMEMBER
        keys = self.store.conn.execute(
            "SELECT json_extract(data, '$.key') FROM events WHERE kind = $1 AND at >= $2",
            (NOTIFIED, since),
        ).fetchall()
        return NotifyState(told=frozenset(str(k) for (k,) in keys if k))

    def run_once(self) -> list[Alert]:
        """One pass; what was told (nothing while another notifier holds the lease)."""
        now = self.room.clock()
        if self.lease is not None and not self.lease.hold(now):
            self.state = None  # read what was told again when the lease comes back
            return []
        if self.state is None:
            self.state = self._told_before()
        facts = replace(attention.facts(self.store.conn, now), code=self._code())
        found = alerts(facts, now=now, permission_after=self.policy.permission_after)
        fresh, self.state = decide(found, self.state, now=now, policy=self.policy)
        untold = any(alert.key not in self.state.told for alert in found)
        self._timed = bool(facts.waiting) or untold
        if not fresh:
            return []
        with write_transaction(self.store.conn) as conn:
            for alert in fresh:
                data = {"key": alert.key, "kind": alert.kind, "text": alert.text}
                event(conn, now, NOTIFIED, "room", alert.agent, data=data)
        for channel in self.channels:
            self._tell(channel, fresh)
        return fresh

    def next_wait(self) -> float:
        """Seconds until the next pass if the room does not change: a second while
        something is timed, at a stand-by's pace while standing by, else at rest."""
        if self.standing_by:
            return STANDBY_INTERVAL
        return INTERVAL if self._timed else REST_INTERVAL

    def _tell(self, channel: NotifyChannel, fresh: list[Alert]) -> None:
        try:
            channel.send(fresh)
        except Exception as exc:  # noqa: BLE001 - one channel's fault is reported, not fatal
            problem = describe(exc)
            if self.problems.get(channel.name) != problem and self.on_problem is not None:
                self.on_problem(channel.name, problem)
            self.problems[channel.name] = problem
            return
        if self.problems.pop(channel.name, None) is not None and self.on_problem is not None:
            self.on_problem(channel.name, None)

    def _code(self) -> tuple[tuple[str, str, str], ...]:
        """Agents touching the same code, from the code tracker (git runs only for the
        agents whose turn ended since the last pass); a git fault costs this pass's code
        alerts, never the others."""
        if self.tracker is None:
            return ()
        count = self.store.changes()
        if count is not None and count == self._code_seen[0] and not self.tracker.pending:
            return self._code_seen[1]  # nothing written since: no turn ended
        try:
            overlaps = self.tracker.refresh(previews=False).overlaps
        except Exception as exc:  # noqa: BLE001 - reported, the other alerts still go out
            if self.on_problem is not None:
                self.on_problem("code", describe(exc))
            return ()
        found = overlap_facts(overlaps)
        self._code_seen = (count, found)
        return found

    def run(
        self,
        stop: threading.Event,
        *,
        on_pass: Callable[[bool], None] | None = None,
        on_problem: Callable[[str | None], None] | None = None,
    ) -> None:
        """Notify until ``stop`` is set: when the room changes, and every ``next_wait``;
        a failed pass (the room locked, a full disk) is retried, less often while the
        fault lasts."""
        guard = Guard("notifier", self.store, on_problem)

        def after(_told: list[Alert] | None) -> None:
            if on_pass is not None and guard.failures == 0:
                on_pass(self.active)

        woken = threading.Event()
        try:
            wake = self.while_active(woken.set, stop)
            with room_changes(
                self.room_watch, self.room.home, stop, wake, prompt=self.prompt(stop)
            ):
                guard.poll(stop, self.run_once, self.next_wait, after, woken=woken, gap=GAP)
        finally:
            self.release()


def build_channels(
    settings: NotifySettings, room: Room, own_socket: str | None
) -> tuple[list[NotifyChannel], list[str]]:
    """The configured channels that can speak here, and why the others cannot.

    tmux speaks on every server a live agent runs in (and the caller's own), read again
    at each alert: agents come and go. With neither, it tells nobody: a default server
    that no agent of this room runs in is someone else's business."""

    def sockets() -> list[str | None]:
        found = room.store.conn.execute(
            "SELECT DISTINCT tmux_socket FROM sessions"
            " WHERE left_at IS NULL AND state != 'ended' AND pane IS NOT NULL"
        ).fetchall()
        named = [own_socket] if own_socket else []
        return [*named, *(s for (s,) in found)]

    made: dict[str, NotifyChannel] = {
        "tmux": TmuxChannel(sockets),
        "desktop": DesktopChannel(),
        "command": CommandChannel(settings.command),
    }
    channels: list[NotifyChannel] = []
    problems: list[str] = []
    for name in dict.fromkeys(settings.channels):
        channel = made[name]
        problem = channel.available()
        if problem is None:
            channels.append(channel)
        else:
            problems.append(f"{name} notifications are off: {problem}")
    return channels, problems
