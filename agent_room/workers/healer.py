"""The deliverer's healer: sessions whose hook was lost get their state from what the
room can observe (``core.heal`` decides; this module looks).

It runs in the active deliverer's pass, so on every wake-up and at least every half
second, and looks at each of this host's sessions at most once a second: at the client's
registry entry (Claude Code), else at the end of the transcript its hooks named. Reads
are bounded and never block: a transcript is opened without following a link, and only
a regular file of this user's is read.
"""

from __future__ import annotations

from typing import Any

from agent_room.adapters.transcripts import read_lines
from agent_room.core.heal import (
    Observation,
    Seen,
    Source,
    due,
    held_since,
    transcript_state,
    verdict,
)
from agent_room.core.native import NativeSession
from agent_room.core.ports import NativeRegistry
from agent_room.core.states import ENDED, IDLE
from agent_room.room import Room


class Healer:
    """Heals the states of one room's sessions on this host (owned by the deliverer)."""

    def __init__(self, room: Room, registry: NativeRegistry | None = None) -> None:
        self.room = room
        self.store = room.store
        self.registry = registry
        self.seen: dict[str, Seen] = {}
        self.looked: dict[str, float] = {}
        self.healed = 0
        """States set from observation so far (the tests and the bench read it)."""

    def run(self, now: float) -> list[str]:
        """Look at the sessions due; return the names whose state was healed."""
        healed = []
        live = set()
        for row in self.store.members():
            session_id = row["session_id"]
            if not session_id or row["host"] not in (None, self.store.host):
                continue
            live.add(session_id)
            state, since = str(row["state"]), float(row["updated_at"])
            if not due(state, since, self.looked.get(session_id), now):
                continue
            self.looked[session_id] = now
            observation = self.observe(row)
            if observation is None:
                self.seen.pop(session_id, None)
                continue
            seen = held_since(self.seen.get(session_id), observation, now)
            self.seen[session_id] = seen
            heal = verdict(
                state=state, state_since=since, observation=observation, seen=seen, now=now
            )
            if heal is None:
                continue
            if self.store.settle_state(
                session_id, heal.state, was=state, since=since, reason=heal.reason, at=now
            ):
                self.healed += 1
                healed.append(str(row["name"]))
        for gone in set(self.looked) - live:
            self.looked.pop(gone, None)
            self.seen.pop(gone, None)
        return healed

    def observe(self, row: dict[str, Any]) -> Observation | None:
        """What the session's client shows now: its registry's status where it keeps
        one, else (for a state other than idle) the end of its transcript."""
        if row["state"] == ENDED:
            return None
        entry = self._entry(row)
        if entry is not None and entry.status is not None:
            return Observation(entry.status, Source.REGISTRY, since=entry.status_at)
        path = row["transcript_path"]
        if row["state"] == IDLE or not path:
            return None
        tail = read_lines(str(path))
        if tail is None:
            return None
        lines, written = tail
        state = transcript_state(lines)
        if state is None:
            return None
        return Observation(state, Source.TRANSCRIPT, since=written)

    def _entry(self, row: dict[str, Any]) -> NativeSession | None:
        if self.registry is None or not row["pid"]:
            return None
        entry = self.registry.entry(int(row["pid"]))
        if entry is None or entry.session_id != row["session_id"]:
            return None  # another session of that process (a /clear), or none
        if row["pid_start"] is not None and entry.proc_start not in (None, row["pid_start"]):
            return None
        return entry
