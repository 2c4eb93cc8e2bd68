"""Resume checkpoints: taking them (by hand, at a session's end, before a compaction),
keeping them to the room's retention, and the context a resume from one gets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.core import checkpoints as rules
from agent_room.core.memory import Kind
from agent_room.store import checkpoints as store_checkpoints
from agent_room.store import entities as store_entities
from agent_room.store import memory as store_memory
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.errors import BadInput, NotFound, Refused
from agent_room.turn.core.names import parse_name
from agent_room.turn.core.prompts import COMPACTING, RESUME_MARK
from agent_room.turn.store.hosts import on_this_host

if TYPE_CHECKING:
    from agent_room.room.base import MemoryRoom
    from agent_room.turn.store.sqlite_base import Row

COMPACTING_KEY = "checkpoint_compaction_cursor"
"""The last audit event the worker looked at for PreCompact hooks (``KEY@host``: each
host's own)."""
KEEP_KEY = "checkpoint_keep"
DAYS_KEY = "checkpoint_days"
"""The room's settings holding the retention (defaults: ``core.checkpoints``)."""

HOOKED_COMPACTION = 600.0
"""A compaction seen in a transcript within this many seconds of a checkpoint its
PreCompact hook asked for is that same compaction."""


class Checkpoints:
    """The room's checkpoints."""

    def __init__(self, room: MemoryRoom) -> None:
        self.room = room
        self.store = room.store

    def retention(self) -> tuple[int, float]:
        """Checkpoints kept per session, and for how many days."""
        settings = SettingsStore(self.store).settings()
        return (
            int(settings.get(KEEP_KEY, rules.KEEP_PER_SESSION)),
            float(settings.get(DAYS_KEY, rules.KEEP_DAYS)),
        )

    def set_retention(self, *, keep: int | None, days: float | None) -> None:
        """Change the retention (``None`` leaves a value as it is)."""
        values: dict[str, object] = {}
        if keep is not None:
            values[KEEP_KEY] = keep
        if days is not None:
            values[DAYS_KEY] = days
        if values:
            SettingsStore(self.store).save(values, at=self.room.clock(), by="operator")

    def take(
        self,
        session: Row,
        *,
        kind: str = rules.MANUAL,
        note: str | None = None,
        upto_seq: int | None = None,
        follow: bool = True,
    ) -> int:
        """Checkpoint a session (its transcript read up to now first, on its own host;
        elsewhere as far as its host read it); return the id."""
        session_id = session["session_id"]
        if not session_id:
            raise BadInput(f"@{session['name']} has no session the room knows of to checkpoint")
        if follow and session["transcript_path"] and on_this_host(self.store, session):
            self.room.follow_transcript(str(session_id), str(session["transcript_path"]))
        checkpoint_id = store_checkpoints.add(
            self.store,
            name=str(session["name"]),
            session_id=str(session_id),
            kind=kind,
            note=note,
            cwd=session["cwd"],
            upto_seq=upto_seq,
            at=self.room.clock(),
        )
        self.prune(str(session_id))
        return checkpoint_id

    def take_named(self, name: str, note: str | None = None) -> int:
        """``agent-room checkpoint NAME``: checkpoint the session holding ``name``."""
        return self.take(self.room.require_member(parse_name(name)), note=note)

    def prune(self, session_id: str) -> list[int]:
        """Forget a session's checkpoints beyond the retention; return their ids."""
        keep, days = self.retention()
        listed = store_checkpoints.listed(self.store, session_id=session_id)
        gone = rules.expired(listed, self.room.clock(), keep=keep, days=days)
        store_checkpoints.delete(self.store, gone)
        return gone

    def at_session_ends(self) -> list[int]:
        """Checkpoint every followed session of this host that ended since its last end
        checkpoint."""
        taken = []
        for session in store_checkpoints.ended_unsaved(self.store):
            taken.append(self.take(session, kind=rules.SESSION_END))
        return taken

    def before_compactions(self) -> list[int]:
        """Checkpoint the sessions of this host whose PreCompact hook fired since its last
        look (the first look starts from now)."""
        key = f"{COMPACTING_KEY}@{self.store.host}"  # each host looks for its own sessions
        after = store_memory.bookmark(self.store, key)
        if after is None:  # a room from before hosts looked each for their own
            after = store_memory.bookmark(self.store, COMPACTING_KEY)
        found, last = store_memory.events_since(self.store, COMPACTING, after or 0)
        if after is None:
            found = []  # a room's old compactions are history, not work
        taken = []
        for event in found:
            session = self.store.session(str(event["subject"]))
            if session is None or not session["name"] or not session["session_id"]:
                continue
            if not on_this_host(self.store, session):
                continue  # its own host's worker takes it, from the transcript it reads
            since = float(event["at"]) - HOOKED_COMPACTION
            if not self.recent_pre_compact(str(session["session_id"]), since):
                taken.append(self.take(session, kind=rules.PRE_COMPACT))
        if last != after:
            store_memory.set_bookmark(self.store, key, last)
        return taken

    def recent_pre_compact(self, session_id: str, since: float) -> bool:
        """Whether a checkpoint before a compaction was taken for the session since then."""
        return any(
            c["kind"] == rules.PRE_COMPACT and float(c["created_at"]) >= since
            for c in store_checkpoints.listed(self.store, session_id=session_id)
        )

    def listed(self, name: str | None = None) -> list[Row]:
        """Checkpoints newest first (of one name)."""
        return store_checkpoints.listed(
            self.store, name=parse_name(name) if name is not None else None
        )

    def find(self, ref: str) -> Row:
        """A checkpoint by id (``12`` or ``#12``), or the newest of a name."""
        number = ref.removeprefix("#")
        if number.isdigit():
            found = store_checkpoints.get(self.store, int(number))
            if found is None:
                raise NotFound(f"no checkpoint #{number}")
            return found
        name = parse_name(ref)
        listed = store_checkpoints.listed(self.store, name=name)
        if not listed:
            raise NotFound(f"no checkpoint of @{name}: take one with agent-room checkpoint {name}")
        return listed[0]

    def context(self, ref: str, *, mode: str = "full", agent: str | None = None) -> str:
        """What a session resumed from the checkpoint ``ref`` is told."""
        rules.check_mode(mode, agent)
        other = parse_name(agent) if agent else None
        checkpoint = self.find(ref)
        upto = int(checkpoint["upto_seq"])
        items = [
            r
            for r in store_memory.items(self.store, str(checkpoint["session_id"]), upto=upto)
            if r["kind"] != Kind.COMPACTED
        ]
        messages = store_checkpoints.messages_upto(
            self.store, str(checkpoint["name"]), int(checkpoint["upto_message"])
        )
        timeline = rules.entries(str(checkpoint["name"]), items, messages)
        chosen = rules.select(timeline, mode, other)
        named = store_entities.mentioned_by(
            self.store, str(checkpoint["name"]), float(checkpoint["created_at"])
        )
        if mode == "agent":
            named = [e for e in named if e["type"] == "service" and e["name"] == other]
        return rules.render(checkpoint, chosen, len(timeline), mode, entities=named)


def queue_resume(room: MemoryRoom, name: str, text: str) -> int:
    """Leave the resume context for the agent about to start as ``name``; return its id.

    Refused while a live session holds the name: that agent would get it instead.
    """
    holder = room.store.holder(name)
    if holder is not None and holder["state"] != "ended":
        raise Refused(f"@{name} is running: resume under another name with --name NEW")
    return room.store.add_message(
        kind="system", sender="room", recipient=name, body=f"{RESUME_MARK}\n{text}", at=room.clock()
    )


def cancel_resume(room: MemoryRoom, message_id: int) -> None:
    """Withdraw a resume context whose agent did not start."""
    store_checkpoints.cancel(room.store, message_id)
