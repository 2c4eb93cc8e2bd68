"""The deliverer's healer: sessions whose hook was lost get their state from what the
room can observe (``core.heal`` decides; this module looks).

It runs in the active deliverer's pass, reads the room's sessions again only when the
room changed, and looks at each of this host's sessions at most once a second: at the
client's registry entry (Claude Code), at a Codex or Gemini CLI pane for a dialog of the
client's own, else at the end of the transcript its hooks named. An idle Claude Code
session is looked at when its registry file changes (the kernel's file events of the
registry folder), not every second: fifty idle agents cost nothing at rest. Reads are
bounded and never block: a transcript is opened without following a link, and only a
regular file of this user's is read; a pane is only read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_room.adapters import inotify
from agent_room.adapters.inotify import DirectoryEvents
from agent_room.adapters.transcripts import read_lines
from agent_room.core.heal import (
    RECHECK,
    SCREEN_CLIENTS,
    Observation,
    Seen,
    Source,
    due,
    held_since,
    screen_observation,
    transcript_state,
    verdict,
)
from agent_room.core.native import NativeSession
from agent_room.core.ports import Multiplexer, NativeRegistry
from agent_room.room.service import Room
from agent_room.turn.core.errors import PaneUnavailable
from agent_room.turn.core.ports import ProcessProbe
from agent_room.turn.core.states import ENDED, IDLE, WAITING

SCAN_EVERY = RECHECK
"""Seconds between two reads of the room's sessions: a session is looked at once per
``RECHECK`` at most, so reading the room more often finds nothing due (and a burst of
wake-ups reads once)."""


class Healer:
    """Heals the states of one room's sessions on this host (owned by the deliverer)."""

    def __init__(
        self,
        room: Room,
        registry: NativeRegistry | None = None,
        mux: Multiplexer | None = None,
        probe: ProcessProbe | None = None,
    ) -> None:
        self.room = room
        self.store = room.store
        self.registry = registry
        self.mux = mux
        self.probe = probe
        self.seen: dict[str, Seen] = {}
        """By name: what was last observed of a session, and since when."""
        self.looked: dict[str, float] = {}
        """By name: when a session was last looked at."""
        self._read_at = float("-inf")
        self._rows: list[dict[str, Any]] | None = None
        self._count: int | None = None
        """The room's change count when ``_rows`` were read."""
        self.events: DirectoryEvents | None = None
        """File events of the client's registry folder (None: not watched)."""
        self.absent = False
        """Whether the registry folder does not exist (no entry to read)."""
        self._watch_tried = float("-inf")
        self.told: set[int] = set()
        """Pids whose registry file changed since their session was last looked at."""
        self.closely = True
        """Whether the last look found a session to look at again within ``RECHECK``
        (one not idle, an observation waiting out its grace, an idle one not watched):
        the deliverer then passes every second, else it may rest."""

    def run(self, now: float) -> list[str]:
        """Look at the sessions due; return the names whose state was healed."""
        if now - self._read_at < SCAN_EVERY:
            return []
        self._read_at = now
        self._registry_events(now)
        healed = []
        live = set()
        closely = False
        for row in self._sessions():
            key = str(row["name"])  # (a placeholder of ``start`` has no session id yet)
            live.add(key)
            state, since = str(row["state"]), float(row["updated_at"])
            quiet = self._quiet(row, key)
            closely = closely or (state not in (IDLE, ENDED)) or (state == IDLE and not quiet)
            if not due(state, since, self.looked.get(key), now, quiet=quiet):
                continue
            self.looked[key] = now
            if row["pid"]:
                self.told.discard(int(row["pid"]))
            observation = self.observe(row)
            if observation is None:
                self.seen.pop(key, None)
                continue
            seen = held_since(self.seen.get(key), observation, now)
            self.seen[key] = seen
            heal = verdict(
                state=state, state_since=since, observation=observation, seen=seen, now=now
            )
            if heal is None:
                continue
            if self.store.settle_state(
                key, heal.state, was=state, since=since, reason=heal.reason, at=now
            ):
                healed.append(str(row["name"]))
        for gone in set(self.looked) - live:
            self.looked.pop(gone, None)
            self.seen.pop(gone, None)
        self.closely = closely
        return healed

    def close(self) -> None:
        """Stop watching the registry folder."""
        if self.events is not None:
            self.events.close()
            self.events = None

    def _sessions(self) -> list[dict[str, Any]]:
        """This host's sessions, read again only when the room changed (always on
        PostgreSQL, which keeps no change count)."""
        count = self.store.changes()
        if self._rows is None or count is None or count != self._count:
            self._rows, self._count = self.store.sessions_here(), count
        return self._rows

    def _quiet(self, row: dict[str, Any], key: str) -> bool:
        """Whether an idle session need not be looked at every second: its client keeps
        a registry whose folder is watched (or absent) and did not change for it, and
        nothing it showed is waiting out a grace."""
        if row["agent"] in SCREEN_CLIENTS:
            return False  # its dialogs are read off its pane
        if self.registry is None:
            return True  # an idle session shows nothing else
        if self.events is None and not self.absent:
            return False  # no file events here: look every second, as before
        pending = self.seen.get(key)
        if pending is not None and pending.state != row["state"]:
            return False
        return not (row["pid"] and int(row["pid"]) in self.told)

    def _registry_events(self, now: float) -> None:
        """Take the registry folder's file events: the pids whose entry changed. A watch
        that ends (the folder removed, events dropped) is made again, and every session
        looked at once."""
        if self.events is not None:
            folder = self.events.path
            gone = False
            for path in self.events.read():
                name = Path(path).name
                pid = name.split(".", 1)[0]
                if path == folder:
                    gone = True  # the folder itself: removed, or the queue overflowed
                elif pid.isdigit():
                    self.told.add(int(pid))
            if not gone:
                return
            self.close()
            self._watch_tried = float("-inf")
        if now - self._watch_tried < RECHECK:
            return
        self._watch_tried = now
        self._watch()

    def _watch(self) -> None:
        folder = self.registry.sessions_dir if self.registry is not None else None
        if folder is None or not inotify.available():
            return
        try:
            self.events = DirectoryEvents(str(folder))
        except OSError:
            self.absent = not folder.exists()  # absent: no entry to read until it is made
            return
        self.absent = False
        self.looked.clear()  # watched from now on: look at everyone once

    def observe(self, row: dict[str, Any]) -> Observation | None:
        """What the session's client shows now: its registry's status where it keeps
        one; a dialog on a Codex or Gemini CLI pane; else (for a state other than idle)
        the end of its transcript, and last the pane without a dialog any more."""
        if row["state"] == ENDED:
            return None
        entry = self._entry(row)
        if entry is not None and entry.status is not None:
            return Observation(entry.status, Source.REGISTRY, since=entry.status_at)
        screen = self._screen(row)
        seen = screen_observation(str(row["state"]), screen) if screen is not None else None
        if seen is not None and seen.state == WAITING:
            return seen
        path = row["transcript_path"]
        tail = read_lines(str(path)) if path and row["state"] != IDLE else None
        state = transcript_state(tail[0]) if tail is not None else None
        if tail is not None and state is not None:
            return Observation(state, Source.TRANSCRIPT, since=tail[1])
        return seen

    def _screen(self, row: dict[str, Any]) -> str | None:
        """The pane of a Codex or Gemini CLI session while its registered process (or
        the one ``start`` began in it) runs. Only read: what it shows can stop typing at
        once, and lets it go only through ``typing_refusal``'s checks."""
        pane, pid = row["pane"], row["pid"]
        if self.mux is None or row["agent"] not in SCREEN_CLIENTS or not pane or not pid:
            return None
        if self.probe is not None and not self.probe.is_alive(int(pid), row["pid_start"]):
            return None
        try:
            return self.mux.capture(row["tmux_socket"], pane)
        except PaneUnavailable:
            return None

    def _entry(self, row: dict[str, Any]) -> NativeSession | None:
        if self.registry is None or not row["pid"]:
            return None
        entry = self.registry.entry(int(row["pid"]))
        if entry is None or entry.session_id != row["session_id"]:
            return None  # another session of that process (a /clear), or none
        if row["pid_start"] is not None and entry.proc_start not in (None, row["pid_start"]):
            return None
        return entry
