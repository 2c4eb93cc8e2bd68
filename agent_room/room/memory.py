"""The room's memory of sessions: following transcripts, and handover contexts.

Runs in the memory worker (and, for a handover approved before the worker got to it,
in the approving process), never in a hook: reading and indexing a transcript costs
what no turn of an agent should wait for. A transcript is a file of its session's host:
only that host reads it; any host builds contexts from what was read there.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agent_room.adapters.follow import read_from, settled, unreadable
from agent_room.core.checkpoints import PRE_COMPACT, epoch
from agent_room.core.entities import from_handover, from_items, from_text
from agent_room.core.memory import (
    Context,
    Item,
    Kind,
    build_context,
    items_of_lines,
    match_query,
)
from agent_room.core.transcript import one_line
from agent_room.room import memory_settings
from agent_room.room.checkpoints import HOOKED_COMPACTION, Checkpoints
from agent_room.room.entities import Entities
from agent_room.store import memory as store_memory
from agent_room.turn.core.errors import NotFound
from agent_room.turn.store.hosts import on_this_host

if TYPE_CHECKING:
    from agent_room.core.memory import Candidate
    from agent_room.room.base import MemoryRoom

KEEP_DAYS = 30
"""Days a session's items are kept after its transcript was last read."""
PROBLEM = "memory.problem"
"""The audit event of a transcript the worker could not read (fully)."""
UNREADABLE = "cannot read"
"""How a transcript that could not be opened is told (``follow.unreadable``); forgotten
once it is read."""


class Memory:
    """Follows transcripts into the memory tables; prepares and attaches contexts."""

    def __init__(self, room: MemoryRoom, *, budget: int | None = None) -> None:
        self.room = room
        self.store = room.store
        self.budget = budget
        """Tokens a context may take; None: the room's setting, read for each context."""

    # -- transcripts ------------------------------------------------------------------

    def follow(self, session_id: str, path: str) -> int:
        """Read what was appended to a session's transcript; return the items added.

        A problem (missing, unreadable, replaced, foreign, too big) is kept on the
        session's cursor and logged once in the room; what was read stays usable.
        """
        added = 0
        while True:
            known = store_memory.cursor(self.store, session_id)
            same = known is not None and known["path"] == path
            offset = int(known["offset"]) if known and same else 0
            inode = known["inode"] if known and same else None
            try:
                chunk = read_from(path, offset, inode)
            except OSError as exc:
                self._problem(session_id, known, unreadable(path, exc.strerror), path)
                return added
            if known is not None and same and chunk.end == offset and not chunk.restarted:
                return added  # nothing new: no write (an idle room stays idle)
            items = items_of_lines(chunk.lines)
            problem = None
            if chunk.foreign:
                problem = f"{path} is not a Claude Code transcript"
            elif chunk.skipped:
                problem = f"{chunk.skipped} bytes of {path} were too many to read and skipped"
            elif chunk.restarted:
                problem = f"{path} shrank or was replaced: read again from its start"
            if problem is not None:
                self._problem(session_id, known, problem, path)
            elif known is not None and str(known.get("problem")).startswith(UNREADABLE):
                known = None  # readable now (the client writes it after the first prompt)
            seq = store_memory.remember(
                self.store,
                session_id,
                path=path,
                inode=chunk.inode,
                offset=chunk.end,
                items=items,
                problem=problem if problem is not None else (known or {}).get("problem"),
                at=self.room.clock(),
            )
            added += len(items)
            self._before_compaction(session_id, items, seq - len(items))
            self._entities(session_id, items)
            if chunk.end <= offset or chunk.end >= chunk.size:
                return added

    def _before_compaction(self, session_id: str, items: list[Item], first: int) -> None:
        """A checkpoint of what came before each compaction in ``items`` (numbered from
        ``first + 1``): the summary that replaces it keeps far less. Sessions whose client
        runs the PreCompact hook were checkpointed by it (``Checkpoints.before_compactions``);
        this catches the others."""
        for index, item in enumerate(items):
            if item.kind != Kind.COMPACTED:
                continue
            session = self.store.session(session_id)
            if session is None or not session["name"]:
                continue
            checkpoints = Checkpoints(self.room)
            when = epoch(item.at) or self.room.clock()
            if checkpoints.recent_pre_compact(session_id, when - HOOKED_COMPACTION):
                continue  # its PreCompact hook had it checkpointed already
            checkpoints.take(session, kind=PRE_COMPACT, upto_seq=first + index, follow=False)

    def _entities(self, session_id: str, items: list[Item]) -> None:
        """The entities of new items into the registry; files changed checked for clashes."""
        if not items:
            return
        session = self.store.session(session_id)
        if session is None or not session["name"]:
            return
        entities = Entities(self.room)
        entities.mention_all(
            from_items((i.kind, i.text) for i in items),
            agent=str(session["name"]),
            session_id=session_id,
            source="transcript",
        )
        now = self.room.clock()
        changes = {i.text: epoch(i.at) or now for i in items if i.kind == Kind.CHANGED}
        if changes:
            entities.changed_files(session, changes.items())

    def follow_live(self) -> int:
        """Follow the transcript of every live session of this host; return the items
        added. A transcript one ``stat`` finds where its cursor stands (or still missing,
        as its cursor says) is not opened."""
        return sum(
            self.follow(str(r["session_id"]), str(r["transcript_path"]))
            for r in store_memory.followed(self.store)
            if not (
                r["cursor_path"] == r["transcript_path"]
                and settled(str(r["transcript_path"]), int(r["offset"]), r["inode"], r["problem"])
            )
        )

    def _problem(
        self, session_id: str, known: dict[str, object] | None, problem: str, path: str
    ) -> None:
        if known is not None and known.get("problem") == problem:
            return  # told once
        self.store.logevent(
            PROBLEM, "room", at=self.room.clock(), subject=session_id, data={"problem": problem}
        )
        store_memory.note_problem(self.store, session_id, path, problem, at=self.room.clock())

    def prune(self, days: float = KEEP_DAYS) -> list[str]:
        """Forget what was drawn from transcripts not read for ``days`` (checkpoints, which
        point into it, keep theirs until they expire); return those sessions."""
        return store_memory.forget_before(self.store, self.room.clock() - days * 86400)

    # -- handover contexts ------------------------------------------------------------

    def prepare(self, message_id: int) -> Context:
        """Prepare (again) the context of a handover from its sender's transcript."""
        handover = self.store.handover(message_id)
        if handover is None:
            raise NotFound(f"no handover #{message_id}")
        sender = str(handover["sender"])
        stored = json.loads(handover["fields"] or "{}")  # the code's are not the sender's words
        fields = {k: v for k, v in stored.items() if not k.startswith("code_")}
        task = (fields.get("what_to_do", ""), fields.get("contract", ""))
        if not any(task):
            message = self.store.message(message_id)
            task = (str(message["body"]) if message else "", "")
        session = self.store.holder(sender)
        session_id = session["session_id"] if session else None
        problem = None
        if session_id and session and session["transcript_path"]:
            if on_this_host(self.store, session):
                self.follow(str(session_id), str(session["transcript_path"]))
            known = store_memory.cursor(self.store, str(session_id))
            problem = known["problem"] if known else None
            if known is None:
                where = session["host"] or "its host"
                problem = f"@{sender}'s transcript is on {where}, whose watch has not read it yet"
        else:
            problem = f"@{sender} has no transcript the room knows of"
        named = from_handover(fields) if fields else from_text(task[0], context=one_line(task[0]))
        Entities(self.room).mention_all(
            named, agent=sender, session_id=session_id, source="handover"
        )
        query = match_query(*task)
        found: list[Candidate] = []
        if session_id:
            # what the sender did up to its request (the client writes a tool call to the
            # transcript before it runs it), not after: another handover, maybe rejected
            upto = store_memory.last_seq_before(
                self.store, str(session_id), float(handover["requested_at"])
            )
            found = store_memory.candidates(self.store, str(session_id), query, upto=upto)
        budget = self.budget or memory_settings.settings(self.room)["budget"]
        context = build_context(sender, found, budget)
        store_memory.save_context(
            self.store,
            message_id,
            session_id=session_id,
            context=context,
            problem=problem,
            at=self.room.clock(),
        )
        return context

    def prepare_pending(self) -> list[int]:
        """Prepare the context of every pending handover that has none yet and whose
        sender runs on this host (another host's transcripts are read there)."""
        done = []
        for row in store_memory.unprepared(self.store):
            self.prepare(int(row["message_id"]))
            done.append(int(row["message_id"]))
        return done

    def attach(self, message_id: int) -> bool:
        """Put the handover's context into its body before it is released (preparing it
        first if the worker has not)."""
        if store_memory.context(self.store, message_id) is None:
            self.prepare(message_id)
        return store_memory.attach(self.store, message_id, at=self.room.clock())

    def attach_quietly(self, message_id: int) -> None:
        """``attach``, but a fault only costs the context (logged), never the approval."""
        handover = self.store.handover(message_id)
        if handover is None or handover["state"] != "pending":
            return  # the decision says why, in its own words
        try:
            self.attach(message_id)
        except Exception as exc:  # noqa: BLE001 - the approval matters more than the context
            self.store.logevent(
                PROBLEM,
                "room",
                at=self.room.clock(),
                subject=str(message_id),
                data={"problem": f"no context for handover #{message_id}: {exc}"},
            )
