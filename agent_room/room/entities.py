"""The shared entity registry's use cases, and the warning when two agents change one file.

Fed by the memory worker (handover fields, messages, transcripts' tool calls) and read
by ``agent-room entities``. Near-duplicates of a type are one entity when rapidfuzz's
ratio reaches the room's threshold; the room's merge strategy decides what a new
mention does to it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from agent_room.core import entities as rules
from agent_room.core.transcript import one_line
from agent_room.store import entities as store_entities
from agent_room.store import memory as store_memory
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.errors import BadInput, NotFound

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from agent_room.core.entities import Mention
    from agent_room.room.base import RoomBase
    from agent_room.turn.store.sqlite_base import Row

STRATEGY_KEY = "entity_strategy"
THRESHOLD_KEY = "entity_threshold"
CLASH_WINDOW = 600.0
"""Two live agents changing one file within this many seconds are both warned."""


class Entities:
    """The room's entity registry."""

    def __init__(
        self, room: RoomBase, *, strategy: str | None = None, threshold: float | None = None
    ) -> None:
        self.room = room
        self.store = room.store
        self._strategy = strategy
        self._threshold = threshold

    def _setting(self, key: str) -> Any:
        return SettingsStore(self.store).get(key)

    @property
    def strategy(self) -> str:
        """How a mention of a known entity is merged (default ``merge_context``)."""
        if self._strategy is None:
            self._strategy = str(self._setting(STRATEGY_KEY) or rules.DEFAULT_STRATEGY)
        return self._strategy

    @property
    def threshold(self) -> float:
        """The similarity at which two names are one entity (default 0.85)."""
        if self._threshold is None:
            value = self._setting(THRESHOLD_KEY)
            self._threshold = float(value) if value is not None else rules.DEFAULT_THRESHOLD
        return self._threshold

    def configure(self, *, strategy: str | None, threshold: float | None) -> None:
        """Store the room's merge strategy and threshold (``None`` keeps a value)."""
        values: dict[str, object] = {}
        if strategy is not None:
            values[STRATEGY_KEY] = rules.check_strategy(strategy)
        if threshold is not None:
            if not 0 < threshold <= 1:
                raise BadInput(f"invalid threshold {threshold}: use a number above 0, up to 1")
            values[THRESHOLD_KEY] = threshold
        if values:
            SettingsStore(self.store).save(values, at=self.room.clock(), by="operator")
        self._strategy = self._threshold = None

    # -- mentions ---------------------------------------------------------------------

    def mention(
        self, mention: Mention, *, agent: str, session_id: str | None = None, source: str
    ) -> int:
        """Record one mention: a new entity, or a merge into the one it names; return the id."""
        kind = rules.check_type(mention.type)
        key = rules.key(kind, mention.name)
        if not key:
            raise BadInput("an entity needs a name")
        found = store_entities.exact(self.store, kind, key)
        if found is None:
            choices = store_entities.keys(self.store, kind)
            match = rules.best_match(key, choices, self.threshold, kind)
            found = store_entities.entity(self.store, match) if match is not None else None
        now = self.room.clock()
        if found is None:
            added = store_entities.add(
                self.store,
                kind=kind,
                name=mention.name.strip(),
                key=key,
                context=mention.context[: rules.MAX_CONTEXT],
                confidence=mention.confidence,
                agent=agent,
                session_id=session_id,
                source=source,
                at=now,
            )
            if added is not None:
                return added
            # another host's worker added it since the look above: a mention of it, then
            return self.mention(mention, agent=agent, session_id=session_id, source=source)
        known = rules.Known(
            found["name"], found["context"], float(found["confidence"]), int(found["version"])
        )
        merged = rules.merge(known, mention, self.strategy)
        changed = merged.context != known.context or merged.confidence != known.confidence
        store_entities.update(
            self.store,
            int(found["id"]),
            context=merged.context if changed else None,
            confidence=merged.confidence if changed else None,
            agent=agent,
            session_id=session_id,
            source=source,
            mention_context=mention.context,
            conflict=merged.conflict,
            at=now,
        )
        return int(found["id"])

    def mention_all(
        self,
        mentions: Iterable[Mention],
        *,
        agent: str,
        session_id: str | None = None,
        source: str,
    ) -> int:
        """Record several mentions; return how many."""
        count = 0
        for mention in mentions:
            self.mention(mention, agent=agent, session_id=session_id, source=source)
            count += 1
        return count

    # -- reading and merging ----------------------------------------------------------

    def search(self, query: str | None = None, *, kind: str | None = None) -> list[Row]:
        """Entities matching ``query`` best first (all, newest first, without one)."""
        if kind is not None:
            rules.check_type(kind)
        listed = store_entities.listed(self.store, kind=kind, limit=10_000 if query else 200)
        if not query:
            return listed
        by_id = {int(r["id"]): r for r in listed}
        order = rules.ranked(query, {i: str(r["name"]) for i, r in by_id.items()})
        return [by_id[i] for i in order]

    def find(self, ref: str) -> Row:
        """An entity by id (``12`` / ``#12``) or by its exact name (of any type)."""
        number = ref.removeprefix("#")
        if number.isdigit():
            found = store_entities.entity(self.store, int(number))
            if found is None:
                raise NotFound(f"no entity #{number}")
            return found
        matches = [
            r
            for r in store_entities.listed(self.store, limit=10_000)
            if rules.key(str(r["type"]), str(r["name"])) == rules.key(str(r["type"]), ref)
        ]
        if not matches:
            raise NotFound(f"no entity named {ref!r}: see agent-room entities")
        if len(matches) > 1:
            ids = ", ".join(f"#{r['id']} ({r['type']})" for r in matches)
            raise BadInput(f"{ref!r} names several entities: {ids}; give an id")
        return matches[0]

    def mentions(self, entity_id: int) -> list[Row]:
        """Who mentioned an entity when, newest first."""
        return store_entities.mentions(self.store, entity_id)

    def merge(self, first: str, second: str) -> Row:
        """``entities merge A B``: B becomes part of A (contexts merged, mentions moved)."""
        keep, gone = self.find(first), self.find(second)
        if keep["id"] == gone["id"]:
            raise BadInput("an entity cannot be merged with itself")
        if keep["type"] != gone["type"]:
            raise BadInput(
                f"#{keep['id']} is a {keep['type']} and #{gone['id']} a {gone['type']}:"
                " only entities of one type merge"
            )
        context = rules.merge_contexts(str(keep["context"]), str(gone["context"]))
        store_entities.fold(
            self.store,
            int(keep["id"]),
            int(gone["id"]),
            context=context,
            agent="operator",
            at=self.room.clock(),
        )
        merged = store_entities.entity(self.store, int(keep["id"]))
        assert merged is not None
        return merged

    def conflicts(self) -> list[Row]:
        """Mentions the ``manual`` strategy left for the operator."""
        return store_entities.conflicts(self.store)

    def resolve(self, conflict_id: int, *, take: bool) -> None:
        """Settle a conflict: take the mention's context, or keep the entity's."""
        open_ = {int(c["id"]): c for c in self.conflicts()}
        if conflict_id not in open_:
            raise NotFound(f"no open entity conflict #{conflict_id}")
        context = str(open_[conflict_id]["context"]) if take else None
        store_entities.resolve(
            self.store, conflict_id, context=context, at=self.room.clock(), by="operator"
        )

    # -- files changed by two agents --------------------------------------------------

    def changed_files(
        self, session: Row, changes: Iterable[tuple[str, float]], *, window: float = CLASH_WINDOW
    ) -> list[tuple[str, str]]:
        """Record the files a session changed (path, when); warn it and every other live
        agent that changed one of them within ``window`` (once per window). Changes older
        than the window (a transcript read late) are recorded without a warning. Return
        the clashes as (path, other agent)."""
        name, session_id = str(session["name"]), str(session["session_id"])
        cwd = session["cwd"] or ""
        now = self.room.clock()
        clashes: list[tuple[str, str]] = []
        for raw, at in changes:
            path = os.path.normpath(Path(cwd) / raw)
            others = store_entities.changed_file(
                self.store, path, session_id, name, at=at, window=window, warn=at >= now - window
            )
            for other in others:
                clashes.append((path, str(other["name"])))
                self._warn(name, str(other["name"]), path, window)
        return clashes

    def scan_messages(self) -> int:
        """Entities named in the messages sent since the last scan; return how many.

        The messages are the room's, not a host's: the memory worker that moves the scan's
        place first (each host runs one) names their entities, the others leave them (a
        pass that fails after that leaves them unnamed: a help, not a record)."""
        before = store_memory.bookmark(self.store, store_entities.MESSAGES_KEY)
        found = store_entities.messages_after(self.store, before or 0)
        if not found:
            return 0
        last = max(int(m["id"]) for m in found)
        if not store_memory.move_bookmark(self.store, store_entities.MESSAGES_KEY, before, last):
            return 0  # another host's worker scans them
        count = 0
        for message in found:
            body = str(message["body"])
            mentions = rules.from_text(body, context=one_line(body, 200))
            count += self.mention_all(mentions, agent=str(message["sender"]), source="message")
        return count

    def _warn(self, first: str, second: str, path: str, window: float) -> None:
        minutes = max(1, round(window / 60))
        for me, peer in ((first, second), (second, first)):
            text = (
                f"[agent-room] @{peer} also changed {path} within {minutes} min of you:"
                f" agree with @{peer} who edits it before changing it again."
            )
            self.store.add_message(
                kind="system", sender="room", recipient=me, body=text, at=self.room.clock()
            )
        self.store.logevent(
            "file.clash",
            "room",
            at=self.room.clock(),
            subject=path,
            data={"agents": [first, second]},
        )
