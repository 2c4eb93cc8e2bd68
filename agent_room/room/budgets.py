"""Budgets: what an agent, or the whole room, may spend over a span, and the levels reached.

A budget's levels (80 % and 100 %, ``core.usage``) are marked once per span in the room
(``budget_marks``): the notifier tells each once, and at 100 % the deliverer and the
Stop hook send the agent nothing of the room's own (``store.delivery.over_budget``)
until the operator raises the budget, which forgets the levels it no longer reaches.
Checked by whoever stores usage (the memory worker's pass, an ask) and by the commands.
"""

from __future__ import annotations

from typing import Any

from agent_room.core.usage import (
    DAY,
    ROOM,
    STOP_AT,
    WARN_AT,
    Budget,
    budget_text,
    level,
    span_start,
)
from agent_room.room.service import Room
from agent_room.store import usage as store_usage
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.names import parse_name

BUDGET_REACHED = "budget.reached"
"""The audit event of a budget level reached: subject the scope, data level and spent."""


class Budgets:
    """The room's budgets."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.store = room.store

    def budgets(self) -> list[Budget]:
        """Every budget, the room's first."""
        return store_usage.budgets(self.store)

    def set(self, scope: str | None, limit_usd: float, span: float = DAY) -> Budget:
        """Set the budget of an agent (``scope``) or of the room (None), and check it now."""
        if not (limit_usd >= 0) or limit_usd > 1e9:
            raise BadInput(f"invalid budget {limit_usd!r}: a number of dollars, 0 or more")
        if span < 60 or span > 366 * DAY:
            raise BadInput("a budget's span is at least a minute and at most a year")
        budget = Budget(ROOM if scope is None else parse_name(scope), float(limit_usd), span)
        store_usage.set_budget(self.store, budget, at=self.room.clock(), by="operator")
        self.check()
        return budget

    def clear(self, scope: str | None) -> None:
        """Remove a budget: nothing it held is held any more."""
        key = ROOM if scope is None else parse_name(scope)
        if not store_usage.clear_budget(self.store, key):
            raise BadInput(f"no budget set for {'the room' if key == ROOM else '@' + key}")

    def check(self) -> list[tuple[Budget, int, float]]:
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

    def rows(self) -> list[dict[str, Any]]:
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
