"""``SnapshotReader``: reads the room into one frozen ``RoomSnapshot``.

Runs in the console's reader thread (and in tests and the benchmark directly). Every
query keeps to an index or a key range, so a re-read costs the same on any history; the
traffic picture covers the last messages only and is summed again only when one
arrives. It also runs the registry's liveness check now and then, so a session whose
process died without a hook shows as ended.
"""

from __future__ import annotations

import json
from bisect import insort
from collections import Counter
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from agent_room.core.links import links_summary
from agent_room.core.ports import NativeRegistry
from agent_room.core.snapshot import (
    Edge,
    FlowEvent,
    HandoverRow,
    RoomSnapshot,
    SessionRow,
    TreeRow,
)
from agent_room.core.tree import TreeNode, build_tree
from agent_room.core.usage import ROOM, span_start
from agent_room.room.entities import CLASH_WINDOW
from agent_room.room.links import Links
from agent_room.room.native import outside_nodes, outside_sessions
from agent_room.room.service import Room
from agent_room.store import memory, views
from agent_room.store.entities import clash_notes
from agent_room.store.intercom import IntercomStore
from agent_room.store.usage import all_over, cost_by_name, last_usage_id
from agent_room.turn.core.cycles import render_cycle
from agent_room.turn.core.format import VIA
from agent_room.turn.room.registry import Registry
from agent_room.turn.store.attention import status_counts
from agent_room.turn.store.loops import LoopStore

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

FLOW_LIMIT = 60
"""Lines of the message flow the console keeps."""
TRAFFIC_WINDOW = 5000
"""The traffic picture weighs the room's last this many messages: who talks now."""
RECOUNT = 500
"""The traffic window is counted whole once in this many messages, else moved on."""
LIVENESS_INTERVAL = 2.0
OUTSIDE_INTERVAL = 1.0
"""Seconds between reads of Claude Code's own registry (sessions outside the room)."""
"""Seconds between liveness checks of the registered processes."""
_FLOW_NAMES = {
    "message.sent": "sent",
    "message.delivered": "delivered",
    "message.read": "read",
    "message.failed": "failed",
    "message.retried": "retried",
    "handover.requested": "requested",
    "handover.approved": "approved",
    "handover.rejected": "rejected",
    "handover.expired": "expired",
    "link.opened": "opened",
    "link.frozen": "frozen",
    "link.thawed": "thawed",
    "link.closed": "closed",
    "loop.held": "loop held",
    "loop.released": "released",
}


STATUS_THEN = {
    "message.sent": "queued",
    "message.delivered": "delivered",
    "message.read": "read",
    "message.failed": "failed",
    "message.retried": "queued",
    "handover.requested": "held",
    "handover.approved": "queued",
    "handover.rejected": "cancelled",
    "handover.expired": "cancelled",
    "loop.held": "held",
    "loop.released": "queued",
}
"""The status a message had when the flow's event happened (a row says what was then,
not what became of the message later); events without a message show none."""


def _frozen(node: TreeNode) -> TreeRow:
    return TreeRow(
        label=node.label,
        session_id=node.session_id,
        state=node.state,
        depth=node.depth,
        kind=node.kind,
        children=tuple(_frozen(c) for c in node.children),
    )


def _summary(body: str | None) -> str:
    for line in (body or "").splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:80]
    return ""


def _waiting_for(name: str, state: str, failed: int, pending: list[Row]) -> str:
    """Why a session waits for the operator: its handovers, its permission dialog, its
    failed deliveries (the notifier tells the same, ``core.attention``); "" if it does not."""
    why = [f"handover #{h['message_id']}" for h in pending if h["sender"] == name]
    if state == "waiting":
        why.append("permission dialog")
    if failed:
        why.append(f"{failed} failed")
    return ", ".join(why)


def _edge_order(edge: Edge) -> tuple[int, str, str]:
    """Busiest first, then by sender and recipient."""
    return (-edge.count, edge.sender, edge.recipient)


class SnapshotReader:
    """Builds snapshots of one room; not thread-safe (one reader thread owns it)."""

    def __init__(
        self,
        room: Room,
        *,
        registry: Registry | None = None,
        flow_limit: int = FLOW_LIMIT,
        liveness_interval: float = LIVENESS_INTERVAL,
        traffic_window: int = TRAFFIC_WINDOW,
        native: NativeRegistry | None = None,
    ) -> None:
        self.room = room
        self.registry = registry
        self.native = native
        """Claude Code's own registry: its sessions outside the room are listed too."""
        self._outside: list[dict[str, Any]] = []
        self._outside_at = float("-inf")
        self.flow_limit = flow_limit
        self.liveness_interval = liveness_interval
        self.traffic_window = traffic_window
        self._traffic: tuple[Edge, ...] = ()
        self._counts: Counter[tuple[str, str]] = Counter()
        """Messages per (sender, recipient) in the traffic window, as last counted."""
        self._last_message = 0
        self._checked_at = float("-inf")
        self._costs: dict[str, tuple[float, bool]] = {}
        self._sessions: dict[str, tuple[tuple[Any, ...], SessionRow]] = {}
        """Each session as last read, with its key (the row and what else it shows): a
        session that did not change keeps its object, which the console then compares
        at a glance."""
        self._events: dict[int, tuple[tuple[Any, ...], FlowEvent]] = {}
        """The flow's events as last read, the same way."""
        self._tree: tuple[object, tuple[TreeRow, ...]] | None = None
        """The tree as last built, with what it was built from."""
        self._costs_mark: tuple[int, float] | None = None
        """The newest usage row and the day the costs were summed at: summed again only
        when either moved (a redraw comes with every room change; new usage at most once
        a pass of the memory worker)."""

    def check_liveness(self, now: float | None = None) -> None:
        """Mark the sessions whose process ended as ended, at most every
        ``liveness_interval`` (with a registry): a write, which moves the room's change
        count, only when one did."""
        now = self.room.clock() if now is None else now
        if self.registry is not None and now - self._checked_at >= self.liveness_interval:
            self._checked_at = now
            self.registry.refresh()

    def read(self) -> RoomSnapshot:
        """The room now."""
        store = self.room.store
        now = self.room.clock()
        self.check_liveness(now)
        members = store.members()
        notes = store.notes()
        for name, count in LoopStore(store).held_by_recipient().items():
            notes[name] = f"{count} held (loop)"  # the loop breaker's: the operator decides
        several = len({m["host"] for m in members}) > 1  # a room across machines
        silent = self.room.silent_hosts(now)
        for member in members:
            if member["host"] in silent:
                notes[member["name"]] = f"host {member['host']} is silent: state unknown"
        members = [
            {**m, "state": "unknown"} if m["host"] in silent and m["state"] != "ended" else m
            for m in members
        ]
        linked = {
            r["name"]: r
            for r in Links(self.room).flag(
                [{"name": m["name"], "session_id": m["session_id"]} for m in members]
            )
        }
        clashes = clash_notes(store, now - CLASH_WINDOW)
        costs = self._costs_today(now)
        over = all_over(store, now)
        pending = self.room.pending_handovers()
        sessions = self._kept_sessions(
            members, notes, linked, clashes, pending, several=several, costs=costs, over=over
        )
        outside = self._outside_rows(now)
        sessions += tuple(_outside_row(r, now, pending) for r in outside)
        intercom = IntercomStore(store).sessions()
        grown = (members, store.subagents(), intercom, outside)
        if self._tree is None or self._tree[0] != grown:
            nodes = build_tree(*grown[:3]) + outside_nodes(outside)
            self._tree = (grown, tuple(_frozen(n) for n in nodes))
        tree = self._tree[1]
        cycles = self.room.handover_cycles(pending)
        contexts = memory.contexts(store, [int(r["message_id"]) for r in pending])
        handovers = tuple(
            HandoverRow(
                id=int(r["message_id"]),
                sender=r["sender"],
                recipient=r["recipient"],
                body=r["body"],
                requested_at=float(r["requested_at"]),
                cycle=cycles.get(int(r["message_id"])),
                context=contexts.get(int(r["message_id"])),
            )
            for r in pending
        )
        events = views.flow_events(store, self.flow_limit)
        events.sort(key=lambda r: (float(r["at"]), int(r["id"])))  # when, not who wrote first
        flow = self._kept_flow(events)
        last = views.last_message_id(store)
        if last != self._last_message:
            self._count_traffic(last)
        traffic = self._traffic
        return RoomSnapshot(
            taken_at=now,
            home=self.room.home,
            sessions=sessions,
            tree=tree,
            handovers=handovers,
            flow=flow,
            traffic=traffic,
            messages=self._last_message,
            operator_unread=status_counts(store.conn).messages,
        )

    def _kept_sessions(
        self,
        members: list[Row],
        notes: dict[str, str],
        linked: dict[str, dict[str, Any]],
        clashes: dict[str, str],
        pending: list[Row],
        *,
        several: bool,
        costs: dict[str, tuple[float, bool]],
        over: Collection[str],
    ) -> tuple[SessionRow, ...]:
        """The room's sessions, each the object of the last read where nothing it shows
        changed."""
        kept: dict[str, tuple[tuple[Any, ...], SessionRow]] = {}
        for r in members:
            name = r["name"]
            link = linked[name]
            key = (
                tuple(r.values()),
                notes.get(name, ""),
                links_summary(link["links"], unanchored=link["unanchored"]),
                bool(link["unanchored"]),
                clashes.get(r["session_id"], ""),
                several,
                costs.get(name),
                name in over or ROOM in over,
                _waiting_for(name, r["state"], int(r["failed"]), pending),
            )
            known = self._sessions.get(name)
            kept[name] = known if known is not None and known[0] == key else (key, _session(r, key))
        self._sessions = kept
        return tuple(row for _key, row in kept.values())

    def _kept_flow(self, events: list[Row]) -> tuple[FlowEvent, ...]:
        """The flow's events, each the object of the last read where its row is the same."""
        kept: dict[int, tuple[tuple[Any, ...], FlowEvent]] = {}
        for r in events:
            if r["kind"] == "message.sent" and r["message_kind"] == "handover":
                continue  # a handover's "requested" line says it was sent
            key = tuple(r.values())
            known = self._events.get(r["id"])
            kept[r["id"]] = known if known is not None and known[0] == key else (key, _flow(r))
        self._events = kept
        return tuple(event for _key, event in kept.values())

    def _count_traffic(self, last: int) -> None:
        """The counts of the window up to message ``last``: those of the window before,
        with the messages that came in added and those that left it taken off (two
        ranges of a few messages, where counting the whole window reads thousands),
        counted whole again every ``RECOUNT`` messages (a rename moves the waiting
        messages to the new name: those counted under the old one are set right then)."""
        store, before, window = self.room.store, self._last_message, self.traffic_window
        counts = self._counts
        moved: set[tuple[str, str]] | None = None  # the pairs whose count moved
        if before <= 0 or not 0 < last - before < window or last // RECOUNT != before // RECOUNT:
            counts = Counter()
            found = views.traffic(store, last, window)
        else:
            moved = set()
            found = views.traffic(store, last, last - before)  # came in: (before, last]
            for r in views.traffic(store, last - window, last - before):  # left the window
                counts[(r["sender"], r["recipient"])] -= int(r["count"])
                moved.add((r["sender"], r["recipient"]))
        for r in found:
            counts[(r["sender"], r["recipient"])] += int(r["count"])
            if moved is not None:
                moved.add((r["sender"], r["recipient"]))
        self._last_message = last
        if moved is None:  # counted whole: every edge anew
            self._counts = +counts  # the pairs whose messages all left the window go
            edges = [Edge(sender, recipient, n) for (sender, recipient), n in self._counts.items()]
            self._traffic = tuple(sorted(edges, key=_edge_order))
            return
        # the edges kept in their order, each moved one put in its place (a room's
        # traffic has a thousand pairs; a few messages move a few)
        for pair in moved:
            if counts[pair] <= 0:
                del counts[pair]  # its messages all left the window
        kept = [e for e in self._traffic if (e.sender, e.recipient) not in moved]
        for sender, recipient in moved:
            if (n := counts.get((sender, recipient), 0)) > 0:
                insort(kept, Edge(sender, recipient, n), key=_edge_order)
        self._traffic = tuple(kept)

    def _costs_today(self, now: float) -> dict[str, tuple[float, bool]]:
        """Each agent's cost today, summed again only when the usage or the day moved on."""
        mark = (last_usage_id(self.room.store), span_start(now))
        if mark != self._costs_mark:
            self._costs = cost_by_name(self.room.store, mark[1])
            self._costs_mark = mark
        return self._costs

    def _outside_rows(self, now: float) -> list[dict[str, Any]]:
        """The client's sessions outside the room, read again every ``OUTSIDE_INTERVAL``."""
        if self.native is not None and now - self._outside_at >= OUTSIDE_INTERVAL:
            self._outside_at = now
            self._outside = outside_sessions(self.room, self.native)
        return self._outside


def _session(row: Row, shown: tuple[Any, ...]) -> SessionRow:
    """A session of the room as the console lists it; ``shown``: the reader's key of it
    (the row, its note, links, clash, whether the room spans hosts, cost, budget, why it
    waits for the operator)."""
    _row, note, links, unanchored, clash, several, cost, over, waiting = shown
    return SessionRow(
        **_identity(row),
        tmux_socket=row["tmux_socket"],
        started_at=float(row["started_at"]),
        unread=int(row["unread"]),
        failed=int(row["failed"]),
        note=note,
        parent=row["parent"],
        depth=int(row["depth"]),
        links=links,
        unanchored=unanchored,
        clash=clash,
        host=row["host"] if several else None,
        cost=cost[0] if cost else None,
        cost_known=cost[1] if cost else True,
        over_budget=over,
        needs_operator=waiting,
    )


def _flow(row: Row) -> FlowEvent:
    kind = _FLOW_NAMES.get(str(row["kind"]), str(row["kind"]))
    sender = row["sender"] or row["actor"]
    recipient = row["recipient"] or row["subject"] or ""
    summary = _summary(row["body"])
    message_kind = row["message_kind"] or ""
    if row["kind"] == "message.delivered":  # how: typed, through the socket, at a Stop
        via = json.loads(row["data"] or "{}").get("via")
        summary = f"via {VIA.get(via, via)} · {summary}" if via else summary
    elif str(row["kind"]).startswith("link."):  # the link's own life, not a message
        data = json.loads(row["data"] or "{}")
        message_kind = "link"
        summary = f"link #{data.get('link', '?')}" + (
            f": {data['reason']}" if data.get("reason") else ""
        )
    elif str(row["kind"]).startswith("loop."):  # the loop breaker's, for the operator
        data = json.loads(row["data"] or "{}")
        path = data.get("path")
        summary = f"loop #{data.get('loop', '?')}" + (
            f": {render_cycle(path)} held (agent-room loops)" if path else ""
        )
        if data.get("reason") == "turns" and path:  # the turn breaker's
            who = " and ".join(f"@{n}" for n in dict.fromkeys(path))
            summary = (
                f"loop #{data.get('loop', '?')}: the room stopped prompting {who},"
                f" {data.get('turns', '?')} turns in {data.get('window', '?')}s"
                " (agent-room loops)"
            )
    return FlowEvent(
        id=int(row["id"]),
        at=float(row["at"]),
        kind=kind,
        message_id=row["message_id"],
        message_kind=message_kind,
        sender=sender,
        recipient=recipient,
        status=STATUS_THEN.get(str(row["kind"]), row["status"] or ""),
        summary=summary,
    )


_IDENTITY = ("name", "session_id", "agent", "state", "cwd", "pane", "pid")


def _identity(row: Row | dict[str, Any]) -> dict[str, Any]:
    """Who a session is and where it runs, the same for one of the room and one outside."""
    return {key: row[key] for key in _IDENTITY}


def _outside_row(row: dict[str, Any], now: float, pending: list[Row]) -> SessionRow:
    """A session outside the room, as the console lists it: its native status, and how
    to bring it in where the delivery column says why messages wait."""
    age = row["age_seconds"]
    return SessionRow(
        **_identity(row),
        tmux_socket=None,
        started_at=now - age if age is not None else now,
        note=f"outside the room ({row['native_status']}): {row['bring_in']}",
        outside=True,
        needs_operator=_waiting_for(row["name"], row["state"], 0, pending),
    )
