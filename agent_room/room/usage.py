"""What the agents spend: reading the clients' records and pricing them.

Runs in the memory worker's pass (each host reads its own sessions' record files, as
it reads their transcripts) and in ``agent-room usage`` / ``budget``; never in a hook.
A record file is read forwards from a byte offset kept in the room, so each byte is
read once and a file that did not change costs one ``stat``. A request is priced when
it is read, at the price of its day (``adapters.prices``); a price the operator sets
later reprices what was stored.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from agent_room.adapters.follow import read_from, settled, unread_bytes, unreadable
from agent_room.adapters.prices import Prices
from agent_room.core.usage import MILLION, PRICES_KEY, Price, Tokens, overrides_from
from agent_room.core.usage_records import ReadState, ask_records, records_of_lines
from agent_room.room.budgets import Budgets
from agent_room.room.service import Room
from agent_room.store import usage as store_usage
from agent_room.store.settings import SettingsStore
from agent_room.store.usage import Priced
from agent_room.turn.core.errors import BadInput

PROBLEM = "usage.problem"
"""The audit event of a record file that could not be read."""
CHUNK = 1024 * 1024
"""Bytes read at a time: a pass with a budget checks its clock after each."""
ALL = 2**62
"""The backlog read: all of it (the memory keeps only a transcript's newest part; every
request of the usage costs)."""
PASS_BUDGET = 0.25
"""Seconds of reading per pass of the memory worker, at most (about, a chunk over)."""


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
        return overrides_from(SettingsStore(self.store).get(PRICES_KEY))

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
        SettingsStore(self.store).save({PRICES_KEY: raw or None}, at=self.room.clock(), by=by)
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
        if known is not None and settled(path, offset, inode, known.problem):
            return 0
        prices: Prices | None = None
        stored = 0
        state = ReadState(model=known.model if known else None)
        while True:
            try:
                chunk = read_from(path, offset, inode, chunk=CHUNK, backlog=ALL)
            except OSError as exc:
                self._problem(session_id, path, unreadable(path, exc.strerror))
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
        found = store_usage.followed(self.store, self.room.clock())
        if not found:
            return 0
        first = self._next % len(found)
        order = found[first:] + found[:first]
        until = None if budget is None else time.monotonic() + budget
        stored = 0
        for done, r in enumerate(order, start=1):
            if r["known"] and settled(str(r["path"]), int(r["offset"]), r["inode"], r["problem"]):
                continue  # where its cursor stands: one stat, no query
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
        for r in store_usage.followed(self.store, self.room.clock()):
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
        Budgets(self.room).check()
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


_UNITS = (
    Tokens(input=MILLION),
    Tokens(output=MILLION),
    Tokens(cache_read=MILLION),
    Tokens(cache_write=MILLION),
)
"""A million tokens of each kind: what an override costs of each is its price per million."""
