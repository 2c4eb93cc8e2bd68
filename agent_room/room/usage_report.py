"""What was spent, summed for the operator: ``agent-room usage`` and the console's screen.

Per agent, model, day, intercom ask or subagent (a column of the usage rows), per link
(the requests of the turns its crossing records judged, on both sides) and per handover
(what its recipient spent from receiving it until it was applied, as the collaboration
ledger dates it). Reads only the span asked about (the store keeps to its indexes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent_room.core.usage import DAY, ROOM, Line, span_start
from agent_room.room.service import Room
from agent_room.store import ledger
from agent_room.store import usage as store_usage
from agent_room.turn.core.budgets import over_text


@dataclass(frozen=True, slots=True)
class Summary:
    """One answer of ``agent-room usage``."""

    by: str
    since: float
    until: float
    lines: list[Line]
    details: list[dict[str, Any]]
    """Per line, what more there is to say (a link's sides, a handover's pair)."""
    over: dict[str, str]
    """Agents whose prompts a spent budget holds, to that budget's scope."""

    def total(self) -> Line:
        """Every line together."""
        whole = Line("total")
        for line in self.lines:
            whole.add(line.tokens, line.cost_usd, line.requests, line.unpriced)
        return whole

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "by": self.by,
            "since": self.since,
            "until": self.until,
            "lines": [
                {**line.as_dict(), **detail}
                for line, detail in zip(self.lines, self.details, strict=True)
            ],
            "total": self.total().as_dict(),
            "over_budget": self.over,
        }


class Reports:
    """Sums of the room's usage."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.store = room.store

    def over(self) -> dict[str, str]:
        """Names whose prompts a spent budget holds now, to the budget's scope."""
        return store_usage.all_over(self.store, self.room.clock())

    def summary(self, by: str, since: float, until: float | None = None) -> Summary:
        """Tokens and cost of ``[since, until)`` per agent, model, link, day, handover,
        ask or subagent."""
        until = self.room.clock() + 1 if until is None else until
        details: list[dict[str, Any]]
        if by == "link":
            pairs = store_usage.by_link(self.store, since, until)
            lines = [line for _, line in pairs]
            details = [detail for detail, _ in pairs]
        elif by == "handover":
            lines, details = self._handovers(since, until)
        else:
            lines = store_usage.by_column(self.store, by, since, until)
            if by == "day":
                for line in lines:
                    line.key = datetime.fromtimestamp(int(line.key) * DAY, UTC).strftime("%Y-%m-%d")
            details = [{} for _ in lines]
        return Summary(by, since, until, lines, details, self.over())

    def _handovers(self, since: float, until: float) -> tuple[list[Line], list[dict[str, Any]]]:
        """What each handover's recipient spent on it: from receiving it until it was
        applied (the end of the turn it was received in), or until now if it is not yet."""
        lines: list[Line] = []
        details: list[dict[str, Any]] = []
        now = self.room.clock()
        for row in ledger.collaborations(self.store, since=since):
            received = row["received_at"]
            if received is None or received >= until:
                continue
            end = row["applied_at"] if row["applied_at"] is not None else now
            line = store_usage.spent_between(self.store, str(row["recipient"]), received, end)
            line.key = f"#{row['id']} @{row['sender']} -> @{row['recipient']}"
            lines.append(line)
            details.append(
                {
                    "handover": int(row["id"]),
                    "sender": row["sender"],
                    "recipient": row["recipient"],
                    "received_at": received,
                    "applied_at": row["applied_at"],
                }
            )
        return lines, details

    def costs_today(self) -> dict[str, tuple[float, bool]]:
        """Each agent's cost since midnight UTC, and whether all of it is known."""
        return store_usage.cost_by_name(self.store, span_start(self.room.clock()))


def dumps(summary: Summary) -> str:
    """``usage --json``."""
    return json.dumps(summary.as_dict(), indent=2)


SPANS = ("today", "14 days")
"""What the console's usage screen shows: today by the hour, or the last 14 days."""


@dataclass(frozen=True, slots=True)
class UsageView:
    """One frozen picture of the room's spending for the console's usage screen."""

    span: str
    by: str
    lines: tuple[Line, ...]
    total: Line
    series: tuple[tuple[str, float], ...]
    """Cost per bucket (an hour of today, or a day), oldest first, labelled."""
    over: tuple[str, ...]
    """What a spent budget holds, as the operator reads it."""


def usage_view(room: Room, *, span: str, by: str) -> UsageView:
    """The usage screen's picture: ``span`` one of ``SPANS``, ``by`` one of ``GROUPS``."""
    now = room.clock()
    reports = Reports(room)
    if span == "today":
        since, step, label = span_start(now), 3600.0, "%H"
        until = since + DAY
    else:
        since, step, label = span_start(now) - 13 * DAY, DAY, "%m-%d"
        until = span_start(now) + DAY
    summary = reports.summary(by, since, min(until, now + 1))
    series = tuple(
        (datetime.fromtimestamp(at, UTC).strftime(label), cost)
        for at, cost in store_usage.series(room.store, since, until, step)
    )
    over = tuple(
        over_text("everyone" if name == ROOM else name, scope)
        for name, scope in sorted(summary.over.items())
    )
    return UsageView(span, by, tuple(summary.lines), summary.total(), series, over)
