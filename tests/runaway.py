"""The runaway scenarios the real tiers share (tests/real: Claude Code; tests/clients: Codex
and Gemini): the same steps and the same bounds on every transport and every client.

A link between two agents started with ``agent-room start`` and no anchor timer (as a
newcomer's are), whose models answer everything with something new: the worst case for a
link. What must hold, whatever the transport wraps a prompt in: the model requests stay
bounded, the link's breaker trips and the operator is told once, and nothing crosses
after the freeze. The scenario watches for a bounded wall time and counts the stand-in's
requests; it never sleeps longer than it watches.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from tests.live import LiveRoom

TRANSPORTS = ("tmux", "native", "native-first")
"""Every delivery transport a room offers (``agent-room transport``)."""
ASK = "Tell me which fields the task list needs (q-91)"
"""What the lead opens the link with (no "?": Gemini CLI takes it out of a typed prompt)."""
NOTIFIED = "operator.notified"
WATCH = float(os.environ.get("AGENT_ROOM_RUNAWAY_WATCH", "45"))
"""Seconds a scenario watches the link at most (``AGENT_ROOM_RUNAWAY_WATCH``: longer for
a measurement). It stops early once the link has stopped and the requests with it."""
SETTLED = 12.0
"""Seconds without a model request, the link stopped, after which a scenario ends."""
OUT = "AGENT_ROOM_RUNAWAY_OUT"
"""A file each scenario appends its tally to as a JSON line (for measurements)."""


class Counter(Protocol):
    """How many model requests a stand-in has answered so far."""

    def __call__(self) -> int: ...


@dataclass(frozen=True)
class Tally:
    """What one scenario left behind, for its asserts and the report."""

    requests: int
    """Model requests answered while it ran (from the link's opening)."""
    seconds: float
    """How long it watched."""
    held: int
    """Messages held (by a frozen link, the loop or the turn breaker) at its end."""
    crossed: int
    """Outputs that crossed the link."""
    crossed_after_freeze: int
    """Outputs queued to cross after the link froze (must be 0)."""
    state: str
    """The link's state at the end."""
    frozen_notices: int
    """Notifications the operator got about a frozen link or a breaker's hold."""
    notices: int
    """Notifications the operator got in all."""
    requests_late: int
    """Model requests in the last ``SETTLED`` seconds of the watch (0: settled)."""


def set_transport(room: LiveRoom[Any], transport: str) -> None:
    """Choose the room's transport the way the operator does."""
    result = room.run("transport", transport)
    assert result.code == 0, result.err


def count(room: LiveRoom[Any], sql: str, *args: object) -> int:
    """One count read straight from the room's store."""
    return int(_value(room, sql, *args) or 0)


def _value(room: LiveRoom[Any], sql: str, *args: object) -> Any:
    opened = room.open()
    try:
        return opened.store.conn.execute(sql, args).fetchone()[0]
    finally:
        opened.close()


def link_opened(room: LiveRoom[Any]) -> bool:
    """Whether the lead's ``send --link`` opened the link."""
    return count(room, "SELECT count(*) FROM links") > 0


def _link_state(room: LiveRoom[Any]) -> str:
    opened = room.open()
    try:
        row = opened.store.conn.execute("SELECT state FROM links ORDER BY id LIMIT 1").fetchone()
    finally:
        opened.close()
    return str(row[0]) if row else "none"


def watch_link(
    room: LiveRoom[Any], requests: Counter, *, seconds: float = WATCH, stops: bool = True
) -> Tally:
    """Watch the link for ``seconds`` at most, and count what happened. It ends early
    once no model request came for ``SETTLED`` seconds and the link is no longer open
    (``stops``; else whatever its state: nothing is delivered on it)."""
    start = time.monotonic()
    first = last = requests()
    last_at = start
    while time.monotonic() - start < seconds:
        time.sleep(1)
        now, seen = time.monotonic(), requests()
        if seen != last:
            last, last_at = seen, now
        elif now - last_at >= SETTLED and (not stops or _link_state(room) != "open"):
            break
    watched = time.monotonic() - start
    total = requests()
    frozen_at = _value(room, "SELECT min(at) FROM events WHERE kind = 'link.frozen'")
    return Tally(
        requests=total - first,
        seconds=round(watched, 1),
        held=count(room, "SELECT count(*) FROM messages WHERE status = 'held'"),
        crossed=count(room, "SELECT count(*) FROM link_turns WHERE outcome = 'crossed'"),
        crossed_after_freeze=0
        if frozen_at is None
        else count(
            room,
            "SELECT count(*) FROM messages WHERE kind = 'link' AND created_at > $1"
            " AND status IN ('queued', 'delivered', 'read')",
            frozen_at,
        ),
        state=_link_state(room),
        frozen_notices=count(
            room,
            "SELECT count(*) FROM events WHERE kind = $1"
            " AND json_extract(data, '$.kind') IN ('frozen', 'loop')",
            NOTIFIED,
        ),
        notices=count(room, "SELECT count(*) FROM events WHERE kind = $1", NOTIFIED),
        requests_late=total - last if time.monotonic() - last_at < SETTLED else 0,
    )


def origins(room: LiveRoom[Any], name: str) -> list[str]:
    """Where each turn of @name came from, as its hook stored it (``core.origins``)."""
    return [str(t["kind"]) for t in room.turns(name, limit=200)]


def outcomes(room: LiveRoom[Any]) -> list[str]:
    """What became of each turn judged on the room's links."""
    opened = room.open()
    try:
        found = opened.store.conn.execute("SELECT outcome FROM link_turns ORDER BY at").fetchall()
    finally:
        opened.close()
    return [str(r[0]) for r in found]


def turn_holds(room: LiveRoom[Any]) -> list[dict[str, Any]]:
    """The turn breaker's holds, as ``agent-room loops --json`` lists them."""
    return [h for h in room.rows("loops") if h.get("reason") == "turns"]


def record(client: str, transport: str, tally: Tally) -> None:
    """Append the tally to ``$AGENT_ROOM_RUNAWAY_OUT``, when set (a measurement)."""
    out = os.environ.get(OUT)
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps({"client": client, "transport": transport, **asdict(tally)}) + "\n")


MAX_REQUESTS = 80
"""Model requests a link scenario may cause in all: the exchange up to the breaker (six
crossings, each a turn and the client's own side requests), the freeze notices' turns,
one reminder each. The runaway this guards against made 150 in 90 s and kept going."""


def check_bounded(tally: Tally, *, delivered: bool = True) -> None:
    """What must hold after a link between two unanchored, chatty agents."""
    assert tally.requests_late == 0, tally  # settled: nothing keeps prompting them
    assert tally.requests <= MAX_REQUESTS, tally
    assert tally.crossed_after_freeze == 0, tally
    if not delivered:  # native only, and a client without the socket: nothing moves
        assert (tally.crossed, tally.state) == (0, "open"), tally
        return
    assert tally.state != "open", tally  # the breaker (or the budget) stopped the link
    if tally.state == "frozen":
        assert tally.frozen_notices == 1, tally  # the operator is told, once
