"""Crossing: each finished turn of a linked session, judged once per link.

The Stop hook only records a turn's final output (``last_assistant_message``) in the
turns table, as it does for every session; the hook path knows nothing of links. The
injector calls ``Crossings.run_once``: for every live link it takes the turns of both
sides that finished since the last verdict, asks ``core.links`` what each one does, and
writes the verdict with ``LinkStore.judge_turn`` (once: a primary key, in the same
transaction as the message). Output that crosses becomes a room message of kind
``link`` from the speaker to its peer, and the ordinary delivery path carries it: a
nudge and the peer's hook when the peer is idle, its Stop hook when it is busy.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from agent_room.core.crossing import (
    CrossingNotices,
    CrossingOutput,
    JudgedTurn,
    Outcome,
    Started,
    TurnGroup,
    assess,
    group_turns,
    judge,
)
from agent_room.core.links import (
    LinkSettings,
    Role,
    Side,
    frame,
    sever_verdict,
)
from agent_room.room.links import notice
from agent_room.room.service import Room
from agent_room.store.links import LinkStore
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.names import OPERATOR, ROOM
from agent_room.turn.core.origins import classify_prompt
from agent_room.turn.core.prompts import PromptKind
from agent_room.turn.core.timers import anchor_reminder
from agent_room.turn.room.gate import held_turns
from agent_room.turn.store.turn_breaker import TurnBreaker

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

BUSY = frozenset({"busy", "waiting"})
"""States in which a session's last turn may still continue."""


class Crossings:
    """Judges the turns of linked sessions and severs links whose sessions ended."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.store = LinkStore(room.store)

    def run_once(self) -> int:
        """One pass over every live link; return how many verdicts were written."""
        settings = LinkSettings.from_mapping(SettingsStore(self.room.store).settings())
        written = 0
        for link in self.store.live_links_with_sessions():
            sides = [
                Side(
                    role,
                    link[f"{role}_state"],
                    bool(link[f"{role}_left"]),
                    link[f"{role}_ended_at"],
                )
                for role in (Role.INITIATOR, Role.RESPONDER)
            ]
            severed, pending = sever_verdict(
                sides, now=self.room.clock(), grace=settings.sever_grace
            )
            for side in sides:
                gone = side.state in (None, "ended") or side.left
                if (severed or pending) and not gone:
                    continue  # the survivor speaks again once its peer is back, or never
                written += self._judge_side(link, side.role.value, settings)
            if severed:
                self._sever(link, severed)
        return written

    def _judge_side(self, link: Row, side: str, settings: LinkSettings) -> int:
        peer_side = "responder" if side == "initiator" else "initiator"
        session_id = str(link[f"{side}_session"])
        me = str(link[f"{side}_name"] or link[side])
        peer = str(link[f"{peer_side}_name"] or link[peer_side])
        link_id = int(link["id"])
        after = self.store.cursor(link_id, session_id, int(link["start_turn"]))
        state, before, turns = self.store.turns_after(session_id, after)
        groups = group_turns(turns, busy=state in BUSY, before=before)
        breaker = TurnBreaker(self.room.store)
        hold = breaker.holding(me, peer) if groups else None
        loop_hold = None if hold is None else (hold[0], held_turns(breaker, hold))
        notices = CrossingNotices(
            freeze=self._both(
                link,
                f"is frozen by the loop breaker: more than {settings.loop_max} crossings"
                f" within {settings.loop_window:g}s. Outputs are held, not lost, until the"
                " operator thaws or closes it. Continue your own work.",
            ),
            close=self._both(
                link,
                f"is closed: its {link['budget']} crossings are spent (the last one has"
                " just crossed). Nothing more crosses; continue your own work.",
            ),
            unanchored=anchor_reminder(link_id, peer),
        )
        written = 0
        for group in groups:
            started = self._started(group, me)
            outcome = assess(group, link_id, started, settings.checkpoint_patterns)
            crossing = None
            if outcome is Outcome.CROSSED:
                body = frame(me, group.output or "", limit=self.room.body_limit)
                crossing = CrossingOutput(me, peer, body, loop_hold=loop_hold)
            now = self.room.clock()
            done = self.store.judge_turn(
                JudgedTurn(link_id, session_id, group.head, group.last, outcome.value, now),
                crossing=crossing,
                decide=partial(
                    judge,
                    now=now,
                    loop_max=settings.loop_max,
                    loop_window=settings.loop_window,
                    breaker_holds=loop_hold is not None,
                ),
                notices=notices,
                window=settings.loop_window,
            )
            written += done is not None
        return written

    def _started(self, group: TurnGroup, name: str) -> Started:
        """What the messages a turn answered say about it: those its nudge named (on
        every transport: ``core.origins`` unwraps it), and those its Stop hook handed
        over when the turn continued."""
        prompt = classify_prompt(group.prompt)
        origins = []
        if prompt.kind == PromptKind.NUDGE and prompt.message_ids:
            origins = self.store.message_origins(prompt.message_ids)
        if group.continued is not None:
            origins += self.store.delivered_between(name, *group.continued)
        if not origins:
            return Started()
        peers = [o for o in origins if o["sender"] not in (ROOM, OPERATOR)]
        person = any(o["sender"] == OPERATOR for o in origins)
        return Started(
            room_only=not peers and not person,
            links=frozenset(int(o["link_id"]) for o in peers if o["link_id"] is not None),
            other=any(o["link_id"] is None for o in peers),
            person=person,
        )

    def _both(self, link: Row, text: str) -> list[tuple[str, str]]:
        link_id = int(link["id"])
        a, b = str(link["initiator"]), str(link["responder"])
        return [(a, notice(link_id, b, text)), (b, notice(link_id, a, text))]

    def _sever(self, link: Row, reason: str) -> None:
        link_id = int(link["id"])
        survivors = [
            (str(link[side]), str(link[peer]))
            for side, peer in (("initiator", "responder"), ("responder", "initiator"))
            if link[f"{side}_state"] not in (None, "ended") and not link[f"{side}_left"]
        ]
        self.store.set_link_state(
            link_id,
            expected=("open", "frozen"),
            target="closed",
            at=self.room.clock(),
            by=ROOM,
            reason=f"severed: {reason}",
            notices=[
                (me, notice(link_id, peer, f"is severed: {reason}. Nothing more crosses."))
                for me, peer in survivors
            ],
        )
