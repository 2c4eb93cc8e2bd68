"""The sessions in the room as ``who`` shows them, read column by column.

``who`` starts in a fresh process and prints every session: at 2,000 sessions an object
per row (a dict with its links, flags and counts) costs more than the rest of the
command. The roster keeps the sessions as columns, and what only some of them have
(unread or held messages, live links, delivery notes) as small maps by name, so each
session costs a few tuple slots; ``sessions()`` builds the dicts of ``who --json`` and
of the callers that want one per session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.core.tree import TreeNode, build_tree
from agent_room.core.usage import ROOM, span_start
from agent_room.room.links import Links
from agent_room.store.intercom import IntercomStore
from agent_room.store.usage import all_over, cost_by_name
from agent_room.store.views import ROSTER_COLUMNS, roster, unread_counts
from agent_room.turn.store.loops import LoopStore

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agent_room.room.base import RoomBase

    LinkFlags = tuple[list[dict[str, Any]], bool]
    """A session's live links and whether it breaks the anchoring rule."""


class Roster:
    """Every session holding a name, oldest first, as parallel columns."""

    __slots__ = (
        "agents",
        "ages",
        "costs",
        "cwds",
        "depths",
        "held",
        "hosts",
        "links",
        "names",
        "notes",
        "over",
        "panes",
        "parents",
        "pids",
        "session_ids",
        "silent",
        "states",
        "transcripts",
        "unread",
    )

    names: Sequence[str]
    session_ids: Sequence[str | None]
    agents: Sequence[str]
    states: Sequence[str]
    silent: set[str]
    hosts: Sequence[str | None]
    panes: Sequence[str | None]
    pids: Sequence[int | None]
    cwds: Sequence[str | None]
    parents: Sequence[str | None]
    depths: Sequence[int]
    ages: Sequence[float]
    transcripts: Sequence[str | None]
    unread: dict[str, tuple[int, int]]
    """Unread and failed messages by recipient (only those with any)."""
    held: dict[str, int]
    """Messages behind a loop hold by recipient (only those with any)."""
    notes: dict[str, str]
    """Why a recipient's messages wait (only those with a note)."""
    links: dict[str, LinkFlags]
    """Live links and the anchoring flag by name (only the linked sessions)."""
    costs: dict[str, tuple[float, bool]]
    """What each agent spent today (since midnight UTC), and whether all of it is known."""
    over: dict[str, str]
    """Scopes whose budget is spent now (a name, or ``core.usage.ROOM`` for everyone)."""

    def __init__(self, room: RoomBase) -> None:
        now = room.clock()
        found = roster(room.store)
        columns: list[Sequence[Any]] = (
            list(zip(*found, strict=True)) if found else [()] * len(ROSTER_COLUMNS)
        )
        (
            self.names,
            self.session_ids,
            self.agents,
            states,
            self.hosts,
            self.panes,
            self.pids,
            self.cwds,
            self.parents,
            self.depths,
            started,
            self.transcripts,
        ) = columns
        silent = room.silent_hosts(now)
        self.silent = silent & set(self.hosts)  # hosts whose watch was not seen lately
        # a silent host's sessions cannot be judged: neither running nor ended
        self.states = (
            [
                "unknown" if host in silent and state != "ended" else state
                for state, host in zip(states, self.hosts, strict=True)
            ]
            if silent
            else states
        )
        self.ages = [round(now - at, 1) for at in started]
        self.unread = unread_counts(room.store)
        self.held = LoopStore(room.store).held_by_recipient()
        self.notes = room.store.notes()
        links = Links(room)
        live = links.live_by_session()
        linked = [
            {"name": name, "session_id": session_id}
            for name, session_id in zip(self.names, self.session_ids, strict=True)
            if str(session_id) in live
        ]
        flagged = links.flag(linked, live) if linked else []
        self.links = {s["name"]: (s["links"], s["unanchored"]) for s in flagged}
        self.costs = cost_by_name(room.store, span_start(now))
        self.over = all_over(room.store, now)

    def over_budget(self, name: str) -> str | None:
        """The spent budget that holds ``name``'s prompts (its own or the room's), if any."""
        return self.over.get(name) or self.over.get(ROOM)

    def identities(self) -> list[dict[str, Any]]:
        """Who each session is (its id, process and state): what the client's own list
        of sessions is compared with (``core.native.outside``)."""
        return [
            {"session_id": sid, "pid": pid, "state": state}
            for sid, pid, state in zip(self.session_ids, self.pids, self.states, strict=True)
        ]

    def sessions(self) -> list[dict[str, Any]]:
        """One dict per session, as ``who --json`` prints them."""
        ids = zip(self.session_ids, self.names, strict=True)
        by_session = {sid: name for sid, name in ids if sid}
        none = (0, 0)
        rows = []
        for name, sid, agent, state, host, pane, pid, cwd, parent, depth, age, path in zip(
            self.names,
            self.session_ids,
            self.agents,
            self.states,
            self.hosts,
            self.panes,
            self.pids,
            self.cwds,
            self.parents,
            self.depths,
            self.ages,
            self.transcripts,
            strict=True,
        ):
            unread, failed = self.unread.get(name, none)
            links, loose = self.links.get(name) or ([], False)
            rows.append(
                {
                    "name": name,
                    "session_id": sid,
                    "agent": agent,
                    "state": state,
                    "host": host,
                    "pane": pane,
                    "pid": pid,
                    "cwd": cwd,
                    "unread": unread,
                    "failed": failed,
                    "delivery": self.notes.get(name, ""),
                    "parent": by_session.get(parent),
                    "parent_session_id": parent,
                    "depth": depth,
                    "age_seconds": age,
                    "transcript_path": path,
                    "held": self.held.get(name, 0),
                    "links": links,
                    "unanchored": loose,
                    "cost_today_usd": round(self.costs.get(name, (0.0, True))[0], 6),
                    "cost_known": self.costs.get(name, (0.0, True))[1],
                    "over_budget": self.over_budget(name),
                }
            )
        return rows


def session_tree(room: RoomBase) -> list[TreeNode]:
    """The session tree of the sessions in the room (a silent host's sessions in state
    ``unknown``), with the intercom's sessions beside their askers."""
    intercom = IntercomStore(room.store).sessions()
    silent = room.silent_hosts(room.clock())
    members = [
        {**r, "state": "unknown"} if r["host"] in silent and r["state"] != "ended" else r
        for r in room.store.members()
    ]
    return build_tree(members, room.store.subagents(), intercom)
