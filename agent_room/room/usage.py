"""What the agents spend: reading the clients' records, pricing them, budgets, summaries.

Runs in the memory worker's pass (each host reads its own sessions' record files, as
it reads their transcripts) and in ``agent-room usage`` / ``budget``; never in a hook.
A record file is read forwards from a byte offset kept in the room, so each byte is
read once and a file that did not change costs one ``stat``. A request is priced when
it is read, at the price of its day (``adapters.prices``); a price the operator sets
later reprices what was stored.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from agent_room.adapters.follow import read_from, unchanged, unread_bytes
from agent_room.adapters.prices import Prices
from agent_room.core.errors import BadInput
from agent_room.core.names import parse_name
from agent_room.core.usage import (
    DAY,
    MILLION,
    PRICES_KEY,
    ROOM,
    STOP_AT,
    WARN_AT,
    Budget,
    Line,
    Price,
    ReadState,
    Tokens,
    ask_records,
    budget_text,
    level,
    over_text,
    overrides_from,
    records_of_lines,
    span_start,
)
from agent_room.room.service import Room
from agent_room.store import ledger
from agent_room.store import usage as store_usage
from agent_room.store.links import LinkStore
from agent_room.store.usage import Priced

BUDGET_REACHED = "budget.reached"
"""The audit event of a budget level reached: subject the scope, data level and spent."""
PROBLEM = "usage.problem"
"""The audit event of a record file that could not be read."""
CHUNK = 1024 * 1024
"""Bytes read at a time: a pass with a budget checks its clock after each."""
ALL = 2**62
"""The backlog read: all of it (the memory keeps only a transcript's newest part; every
request of the usage costs)."""
PASS_BUDGET = 0.25
"""Seconds of reading per pass of the memory worker, at most (about, a chunk over)."""


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


class Usage:
    """The room's usage: one per process that reads or reports it."""

    def __init__(self, room: Room, *, prices: Prices | None = None) -> None:
        self.room = room
        self.store = room.store
        self._prices = prices
        self._next = 0
        """Where the next pass with a budget starts reading (the files are taken in turn)."""

    # -- prices ----------------------------------------------------------------------

    def overrides(self) -> dict[str, Price]:
        """The room's price overrides."""
        return overrides_from(LinkStore(self.store).settings().get(PRICES_KEY))

    def prices(self) -> Prices:
        """The prices now (the room's overrides read again)."""
        if self._prices is None:
            return Prices(self.overrides())
        return self._prices

    def set_price(self, model: str, price: Price | None, *, by: str = "operator") -> int:
        """Override ``model``'s price (None: back to the price source's); reprice what
        was stored of it; return how many requests were repriced."""
        model = model.strip()
        if not model or len(model) > 200 or any(c.isspace() for c in model):
            raise BadInput(f"invalid model name {model!r}")
        raw = {k: v.as_dict() for k, v in self.overrides().items()}
        if price is None:
            if raw.pop(model, None) is None:
                raise BadInput(f"no price set for {model}")
        else:
            raw[model] = price.as_dict()
        LinkStore(self.store).save_settings({PRICES_KEY: raw or None}, at=self.room.clock(), by=by)
        prices = Prices(overrides_from(raw))
        if price is None and not prices.known(model):
            return 0  # no price any more: what was priced keeps the price it had
        a, b, c, d = (prices.cost(model, t) or 0.0 for t in _UNITS)
        return store_usage.reprice(self.store, model, (a, b, c, d))

    # -- reading the clients' records ------------------------------------------------

    def follow(
        self,
        session_id: str,
        path: str,
        *,
        name: str | None,
        agent_id: str | None,
        until: float | None = None,
    ) -> int:
        """Read what was appended to one record file (up to its end, or a chunk at a time
        until ``until`` on the monotonic clock has passed); return the requests stored.
        Nothing is skipped however far behind the reader is: every request costs."""
        known = store_usage.cursor(self.store, path)
        offset = known.offset if known else 0
        inode = known.inode if known else None
        if known is not None and unchanged(path, offset, inode):
            return 0
        prices: Prices | None = None
        stored = 0
        state = ReadState(model=known.model if known else None)
        while True:
            try:
                chunk = read_from(path, offset, inode, chunk=CHUNK, backlog=ALL)
            except OSError as exc:
                self._problem(session_id, path, f"cannot read {path}: {exc.strerror}")
                return stored
            if chunk.end == offset and not chunk.restarted and known is not None:
                return stored
            found, state = records_of_lines(chunk.lines, state)
            prices = prices or self.prices()
            priced = [
                Priced(
                    r if agent_id is None else replace(r, agent_id=agent_id),
                    name,
                    prices.cost(r.model, r.tokens, r.at),
                )
                for r in found
            ]
            stored += store_usage.save(
                self.store,
                session_id,
                priced,
                path=path,
                inode=chunk.inode,
                offset=chunk.end,
                model=state.model,
                at=self.room.clock(),
            )
            known = store_usage.cursor(self.store, path)
            if chunk.end <= offset or chunk.end >= chunk.size:
                return stored
            if until is not None and time.monotonic() >= until:
                return stored  # the rest at the next pass
            offset, inode = chunk.end, chunk.inode

    def follow_live(self, *, budget: float | None = None) -> int:
        """Read the record files of this host's sessions; return the requests stored.

        With a ``budget`` (seconds), stop once it is spent and go on from the next file
        at the next pass: a backlog (a room the reader first sees, with long transcripts)
        is read over several passes and never holds up the worker's other work."""
        found = store_usage.followed(self.store)
        if not found:
            return 0
        first = self._next % len(found)
        order = found[first:] + found[:first]
        until = None if budget is None else time.monotonic() + budget
        stored = 0
        for done, r in enumerate(order, start=1):
            stored += self.follow(
                str(r["session_id"]), str(r["path"]), name=r["name"], agent_id=r["agent_id"],
                until=until,
            )  # fmt: skip
            if until is not None and time.monotonic() >= until:
                self._next = first + done
                break
        return stored

    def behind(self) -> int:
        """Bytes of this host's record files not read yet (a backlog being worked off)."""
        total = 0
        for r in store_usage.followed(self.store):
            known = store_usage.cursor(self.store, str(r["path"]))
            total += unread_bytes(str(r["path"]), known.offset if known else 0)
        return total

    def record_ask(
        self,
        result: dict[str, Any],
        *,
        asker: str,
        label: str,
        ask_id: str,
        cumulative: bool = False,
    ) -> int:
        """Keep the usage of one ``claude -p`` run of the intercom, at the client's price.

        A resumed client reports the whole conversation (``cumulative``, as the intercom
        judges it): what earlier asks of the session stored is taken off, so each ask
        keeps what it added."""
        session_id = result.get("session_id")
        if not isinstance(session_id, str):
            return 0
        now = self.room.clock()
        prices = self.prices()
        before = store_usage.ask_totals(self.store, session_id) if cumulative else {}
        priced = []
        for record in ask_records(result, key=f"ask:{ask_id}", at=now):
            cost = record.cost_usd
            if cost is None:
                cost = prices.cost(record.model, record.tokens, now)
            earlier, spent = before.get(record.model, (Tokens(), 0.0))
            tokens = record.tokens - earlier
            if cost is not None:
                cost = max(0.0, cost - spent)
            priced.append(
                Priced(replace(record, tokens=tokens), asker, cost, kind="ask", ref=label)
            )
        stored = store_usage.save(self.store, session_id, priced, at=now)
        self.check_budgets()
        return stored

    def _problem(self, session_id: str, path: str, problem: str) -> None:
        cursor = store_usage.cursor(self.store, path)
        if cursor is not None and cursor.problem == problem:
            return  # told once
        self.store.logevent(
            PROBLEM, "room", at=self.room.clock(), subject=session_id, data={"problem": problem}
        )
        store_usage.save(
            self.store,
            session_id,
            [],
            path=path,
            inode=cursor.inode if cursor else None,
            offset=cursor.offset if cursor else 0,
            model=cursor.model if cursor else None,
            problem=problem,
            at=self.room.clock(),
        )

    # -- budgets ---------------------------------------------------------------------

    def budgets(self) -> list[Budget]:
        """Every budget, the room's first."""
        return store_usage.budgets(self.store)

    def set_budget(self, scope: str | None, limit_usd: float, span: float = DAY) -> Budget:
        """Set the budget of an agent (``scope``) or of the room (None), and check it now."""
        if not (limit_usd >= 0) or limit_usd > 1e9:
            raise BadInput(f"invalid budget {limit_usd!r}: a number of dollars, 0 or more")
        if span < 60 or span > 366 * DAY:
            raise BadInput("a budget's span is at least a minute and at most a year")
        budget = Budget(ROOM if scope is None else parse_name(scope), float(limit_usd), span)
        store_usage.set_budget(self.store, budget, at=self.room.clock(), by="operator")
        self.check_budgets()
        return budget

    def clear_budget(self, scope: str | None) -> None:
        """Remove a budget: nothing it held is held any more."""
        key = ROOM if scope is None else parse_name(scope)
        if not store_usage.clear_budget(self.store, key):
            raise BadInput(f"no budget set for {'the room' if key == ROOM else '@' + key}")

    def check_budgets(self) -> list[tuple[Budget, int, float]]:
        """Mark the levels each budget reached in its span now; return the new ones
        (the notifier tells each once; at ``STOP_AT`` the agent's prompts wait)."""
        now = self.room.clock()
        fresh = []
        for budget in self.budgets():
            start = span_start(now, budget.span)
            spent = store_usage.spent_since(self.store, budget.scope, start)
            reached = level(spent, budget.limit_usd)
            for mark in (WARN_AT, STOP_AT):
                if reached >= mark and store_usage.mark(
                    self.store, budget.scope, start, mark, spent, now
                ):
                    fresh.append((budget, mark, spent))
                    self.store.logevent(
                        BUDGET_REACHED,
                        "room",
                        at=now,
                        subject=budget.scope,
                        data={
                            "level": mark,
                            "spent_usd": round(spent, 6),
                            "limit_usd": budget.limit_usd,
                            "text": budget_text(budget, spent, mark, start),
                        },
                    )
        return fresh

    def over(self) -> dict[str, str]:
        """Names whose prompts a spent budget holds now, to the budget's scope (a spent
        room budget holds everyone: ``*room*``)."""
        return store_usage.all_over(self.store, self.room.clock())

    def budget_rows(self) -> list[dict[str, Any]]:
        """Each budget with what its scope spent in its current span."""
        now = self.room.clock()
        found = []
        for budget in self.budgets():
            start = span_start(now, budget.span)
            spent = store_usage.spent_since(self.store, budget.scope, start)
            found.append(
                {
                    "scope": budget.scope,
                    "label": budget.label,
                    "limit_usd": budget.limit_usd,
                    "span_s": budget.span,
                    "since": start,
                    "spent_usd": round(spent, 6),
                    "percent": round(100 * spent / budget.limit_usd, 1)
                    if budget.limit_usd
                    else None,
                    "held": level(spent, budget.limit_usd) >= STOP_AT
                    and STOP_AT in store_usage.marks(self.store, budget.scope, start),
                }
            )
        return found

    # -- summaries -------------------------------------------------------------------

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


_UNITS = (
    Tokens(input=MILLION),
    Tokens(output=MILLION),
    Tokens(cache_read=MILLION),
    Tokens(cache_write=MILLION),
)
"""A million tokens of each kind: what an override costs of each is its price per million."""


def dumps(summary: Summary) -> str:
    """``usage --json``."""
    return json.dumps(summary.as_dict(), indent=2)


# -- the console's usage screen -----------------------------------------------------------

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


def usage_view(usage: Usage, *, span: str, by: str) -> UsageView:
    """The usage screen's picture: ``span`` one of ``SPANS``, ``by`` one of ``GROUPS``."""
    now = usage.room.clock()
    if span == "today":
        since, step, label = span_start(now), 3600.0, "%H"
        until = since + DAY
    else:
        since, step, label = span_start(now) - 13 * DAY, DAY, "%m-%d"
        until = span_start(now) + DAY
    summary = usage.summary(by, since, min(until, now + 1))
    series = tuple(
        (datetime.fromtimestamp(at, UTC).strftime(label), cost)
        for at, cost in store_usage.series(usage.store, since, until, step)
    )
    over = tuple(
        over_text("everyone" if name == ROOM else name, scope)
        for name, scope in sorted(summary.over.items())
    )
    return UsageView(span, by, tuple(summary.lines), summary.total(), series, over)
