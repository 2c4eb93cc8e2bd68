"""The registry: sessions registered by hooks, their state, liveness and tree.

Facts about processes (pid, start ticks, ancestors) are gathered by the entry point
through an adapter and passed in; this module only applies the rules.
"""

from __future__ import annotations

from agent_room.turn.core import states
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.names import name_from_cwd, parse_name
from agent_room.turn.core.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    from agent_room.turn.core.ports import ProcessProbe
    from agent_room.turn.room.service import RoomCore
    from agent_room.turn.store.sqlite_base import Row


class SessionFacts(Record):
    """What a hook knows about the session it runs for."""

    __slots__ = (
        "agent",
        "ancestors",
        "cwd",
        "name",
        "pane",
        "parent_hint",
        "pid",
        "pid_start",
        "session_id",
        "tmux_socket",
        "transcript_path",
    )
    DEFAULTS: ClassVar[dict[str, Any]] = dict.fromkeys(__slots__) | {
        "agent": "claude",
        "ancestors": (),
    }

    session_id: str
    cwd: str | None
    transcript_path: str | None
    pid: int | None
    pid_start: int | None
    pane: str | None
    tmux_socket: str | None
    """The tmux server the pane belongs to (from ``$TMUX``)."""
    agent: str
    name: str | None
    """``AGENT_ROOM_NAME`` as set by the launcher, if any."""
    parent_hint: str | None
    """``AGENT_ROOM_PARENT``: a name or session id set by whoever spawned the session."""
    ancestors: tuple[tuple[int, int], ...]
    """The agent's process ancestors as (pid, start ticks), nearest first."""


class Registry:
    """Session registration and state for one room."""

    def __init__(self, room: RoomCore, probe: ProcessProbe) -> None:
        self.room = room
        self.store = room.store
        self.probe = probe

    def _parent(self, facts: SessionFacts) -> Row | None:
        if facts.parent_hint:
            hint = facts.parent_hint
            row = self.store.session(hint)
            if row is None:
                try:
                    row = self.store.holder(parse_name(hint))
                except BadInput:
                    row = None
            if row is not None and row["session_id"] != facts.session_id:
                return row
        live = {(r["pid"], r["pid_start"]): r for r in self.store.live_pids()}
        for pid, start in facts.ancestors:
            row = live.get((pid, start))
            # (a placeholder of ``agent-room start`` has no session yet: not a parent)
            if row is not None and row["session_id"] and row["session_id"] != facts.session_id:
                return self.store.session(row["session_id"])
        return None

    def register(self, facts: SessionFacts) -> Row:
        """Record the session (new, resumed, or adopting a hand-joined name); return it."""
        existing = self.store.session(facts.session_id)
        explicit = bool(facts.name)
        wanted = parse_name(facts.name) if facts.name else name_from_cwd(facts.cwd or "")
        if explicit and existing is None and self.store.holder(wanted) is None:
            # launched as a name since renamed (a /clear starts a new session with the
            # launch environment): it continues under the name it was given
            wanted = self.store.renamed_to(wanted) or wanted
        parent = self._parent(facts)
        columns: dict[str, object] = {
            "session_id": facts.session_id,
            "agent": facts.agent,
            "state": states.IDLE,
            "pane": facts.pane,
            "tmux_socket": facts.tmux_socket,
            "pid": facts.pid,
            "pid_start": facts.pid_start,
            "cwd": facts.cwd,
            "transcript_path": facts.transcript_path,
        }
        if parent is not None:
            columns["parent"] = parent["session_id"]
            columns["depth"] = int(parent["depth"]) + 1
        elif existing is None:
            columns["depth"] = 0
        return self.store.register(
            columns,
            wanted=wanted,
            explicit=explicit,
            at=self.room.clock(),
            alive=self.probe.is_alive,
        )

    def ensure(self, session_id: str, facts: Callable[[], SessionFacts]) -> Row:
        """The session's row, registering it first (with ``facts()``, gathered only then)
        if its SessionStart was missed."""
        row = self.store.session(session_id)
        if row is None or row["left_at"] is not None:
            return self.register(facts())
        return row

    def set_state(self, session_id: str, state: str, *, new_turn: bool = False) -> None:
        """Record a state change told by a hook (one of ``core.states``)."""
        self.store.set_state(session_id, str(state), at=self.room.clock(), reset_blocks=new_turn)

    def refresh(self) -> list[str]:
        """Mark sessions whose process died or whose PID was reused as ended."""
        gone = [
            (r["session_id"], "process gone or pid reused")
            for r in self.store.live_pids()
            if not self.probe.is_alive(int(r["pid"]), r["pid_start"])
        ]
        if gone:
            self.store.mark_ended(gone, at=self.room.clock())
        return [sid for sid, _ in gone]
