"""Links and their per-turn verdicts, in SQLite (the room's settings: ``store.settings``).

Not mixed into ``SqliteStore``: the hooks import that class on every turn and never need
any of this, so it is a separate class over the same connection. Each public method is
one transaction with its audit events. The rules (what crosses, the limits) come from
``core.links`` and ``core.crossing`` through the callers; this module only keeps the
state consistent: a turn's verdict is written once (primary key), and every state change
is a compare and set, so racing injectors or operators cannot both win.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_room.core.crossing import (
    CrossingNotices,
    CrossingOutput,
    JudgedTurn,
    LinkFacts,
    Outcome,
    Verdict,
)
from agent_room.core.links import LinkState
from agent_room.store.timers import ROOM, TimerStore
from agent_room.turn.core.origins import REMINDER_PREFIX
from agent_room.turn.core.timers import REMIND_EVERY
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import Params
from agent_room.turn.store.port import Connection
from agent_room.turn.store.sqlite_base import event, rows

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agent_room.store.timers import Notices
    from agent_room.turn.store.sqlite_base import Row


class LinkStore(TimerStore):
    """Link (and timer) state of one room, on the connection of a ``SqliteStore``."""

    # -- links ------------------------------------------------------------------------

    def link(self, link_id: int) -> Row | None:
        """One link by id."""
        row = self.conn.execute("SELECT * FROM links WHERE id = $1", (link_id,)).fetchone()
        return dict(row) if row else None

    def live_link(self, session_a: str, session_b: str) -> Row | None:
        """The open or frozen link between two sessions, whoever opened it."""
        row = self.conn.execute(
            "SELECT * FROM links WHERE state != 'closed' AND ("
            " (initiator_session = $1 AND responder_session = $2)"
            " OR (initiator_session = $3 AND responder_session = $4))",
            (session_a, session_b, session_b, session_a),
        ).fetchone()
        return dict(row) if row else None

    def links(self, *, live_only: bool = False, limit: int = 200) -> list[Row]:
        """Links, newest first, with the messages each holds while frozen."""
        where = "WHERE l.state != 'closed'" if live_only else ""
        return rows(
            self.conn.execute(
                "SELECT l.*, (SELECT count(*) FROM messages m WHERE m.link_id = l.id"
                f" AND m.kind = 'link' AND m.status = 'held') AS held FROM links l {where}"
                " ORDER BY l.id DESC LIMIT $1",
                (limit,),
            )
        )

    def latest_pair_link(self, a: str, b: str) -> Row | None:
        """The newest link between the agents named ``a`` and ``b``, whoever opened it."""
        row = self.conn.execute(
            "SELECT * FROM links WHERE (initiator = $1 AND responder = $2)"
            " OR (initiator = $3 AND responder = $4) ORDER BY id DESC LIMIT 1",
            (a, b, b, a),
        ).fetchone()
        return dict(row) if row else None

    def grant(self, link_id: int, count: int, *, at: float, by: str, notices: Notices) -> None:
        """Raise a link's budget by ``count`` crossings (the operator's decision)."""
        with write_transaction(self.conn) as conn:
            conn.execute(
                "UPDATE links SET budget = budget + $1, updated_at = $2 WHERE id = $3",
                (count, at, link_id),
            )
            event(conn, at, "link.granted", by, None, data={"link": link_id, "count": count})
            self._notify(conn, notices, at, link_id)

    def live_links_with_sessions(self) -> list[Row]:
        """Open and frozen links, with the state of both sessions (for severing)."""
        return rows(
            self.conn.execute(
                "SELECT l.*, si.state AS initiator_state, si.left_at AS initiator_left,"
                " si.name AS initiator_name, si.ended_at AS initiator_ended_at,"
                " sr.state AS responder_state, sr.left_at AS responder_left,"
                " sr.name AS responder_name, sr.ended_at AS responder_ended_at"
                " FROM links l"
                " LEFT JOIN sessions si ON si.session_id = l.initiator_session"
                " LEFT JOIN sessions sr ON sr.session_id = l.responder_session"
                " WHERE l.state != 'closed' ORDER BY l.id"
            )
        )

    def open_link(
        self,
        *,
        initiator: str,
        initiator_session: str,
        responder: str,
        responder_session: str,
        budget: int,
        at: float,
        rules: Callable[[int], Notices],
        body: str,
    ) -> tuple[Row, bool, int]:
        """Open a link (or take the live one between the two sessions) and send ``body``
        on it; return the link, whether it is new, and the message id.

        ``rules(link_id)`` gives the notices both sides receive once, when it opens, in
        the same transaction as the body (one nudge carries both). The turns already
        recorded never cross: the link starts after the newest turn.
        """
        with write_transaction(self.conn) as conn:
            existing = conn.execute(
                "SELECT * FROM links WHERE state != 'closed' AND ("
                " (initiator_session = $1 AND responder_session = $2)"
                " OR (initiator_session = $3 AND responder_session = $4))",
                (initiator_session, responder_session, responder_session, initiator_session),
            ).fetchone()
            if existing is not None:
                live = int(existing["id"])
                sent = self._message(conn, "chat", initiator, responder, body, at, link_id=live)
                return dict(existing), False, sent
            newest = conn.execute("SELECT coalesce(max(id), 0) FROM turns").fetchone()[0]
            link_id = conn.execute(
                "INSERT INTO links (initiator, initiator_session, responder, responder_session,"
                " budget, start_turn, opened_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)"
                " RETURNING id",
                (
                    initiator,
                    initiator_session,
                    responder,
                    responder_session,
                    budget,
                    newest,
                    at,
                    at,
                ),
            ).fetchone()[0]
            event(
                conn,
                at,
                "link.opened",
                initiator,
                responder,
                data={"link": link_id, "budget": budget},
            )
            self._notify(conn, rules(link_id), at, link_id)
            sent = self._message(conn, "chat", initiator, responder, body, at, link_id=link_id)
            row = conn.execute("SELECT * FROM links WHERE id = $1", (link_id,)).fetchone()
            return dict(row), True, sent

    def set_link_state(
        self,
        link_id: int,
        *,
        expected: Sequence[str],
        target: str,
        at: float,
        by: str,
        reason: str | None,
        notices: Notices,
        closing_words: tuple[str, str, str] | None = None,
    ) -> int | None:
        """Move a link from one of ``expected`` to ``target`` (compare and set).

        Closing cancels the outputs held while frozen (they stay in the history);
        ``closing_words`` (sender, recipient, body) is delivered first, in the same
        transaction. Returns the closing words' message id (0 without them), or None
        when the link was not in an expected state.
        """
        with write_transaction(self.conn) as conn:
            p = Params()
            sets = f"state = {p(target)}, updated_at = {p(at)}"
            if target == "closed":
                sets += f", closed_at = {p(at)}, close_reason = {p(reason)}, closed_by = {p(by)}"
            elif target == "frozen":
                sets += f", frozen_at = {p(at)}, freeze_reason = {p(reason)}"
            else:
                sets += ", frozen_at = NULL, freeze_reason = NULL"
            cursor = conn.execute(
                f"UPDATE links SET {sets} WHERE id = {p(link_id)} AND state IN"
                f" ({p.each(expected)})",
                p,
            )
            if cursor.rowcount == 0:
                return None
            message_id = 0
            if closing_words is not None:
                sender, recipient, body = closing_words
                message_id = self._message(
                    conn, "chat", sender, recipient, body, at, link_id=link_id
                )
            if target == "closed":
                self._cancel_held(conn, link_id, reason or "link closed")
            elif target == "open":
                self._release_held(conn, link_id, at)
            kind = {"closed": "link.closed", "frozen": "link.frozen", "open": "link.thawed"}
            event(conn, at, kind[target], by, None, data={"link": link_id, "reason": reason})
            self._notify(conn, notices, at, link_id)
            return message_id

    @staticmethod
    def _cancel_held(conn: Connection, link_id: int, reason: str) -> None:
        conn.execute(
            "UPDATE messages SET status = 'cancelled', failure = $1 WHERE link_id = $2"
            " AND kind = 'link' AND status = 'held'",
            (f"not delivered: {reason}", link_id),
        )

    def _release_held(self, conn: Connection, link_id: int, at: float) -> None:
        """On thaw, held outputs cross in order, each spending the budget like any other."""
        link = conn.execute("SELECT * FROM links WHERE id = $1", (link_id,)).fetchone()
        left = int(link["budget"]) - int(link["crossings"])
        held = conn.execute(
            "SELECT id FROM messages WHERE link_id = $1 AND kind = 'link' AND status = 'held'"
            " ORDER BY id",
            (link_id,),
        ).fetchall()
        released = [int(r[0]) for r in held[: max(0, left)]]
        for message_id in released:
            conn.execute("UPDATE messages SET status = 'queued' WHERE id = $1", (message_id,))
            conn.execute(
                "UPDATE link_turns SET outcome = 'released' WHERE link_id = $1 AND message_id = $2",
                (link_id, message_id),
            )
        if released:
            conn.execute(
                "UPDATE links SET crossings = crossings + $1 WHERE id = $2",
                (len(released), link_id),
            )
            event(conn, at, "link.released", ROOM, None, data={"link": link_id, "ids": released})

    # -- turns ------------------------------------------------------------------------

    def cursor(self, link_id: int, session_id: str, start_turn: int) -> int:
        """The last turn row of ``session_id`` already judged on the link."""
        row = self.conn.execute(
            "SELECT max(last_turn) FROM link_turns WHERE link_id = $1 AND session_id = $2",
            (link_id, session_id),
        ).fetchone()
        return max(start_turn, int(row[0] or 0))

    def turns_after(
        self, session_id: str, after: int, limit: int = 200
    ) -> tuple[str | None, Row | None, list[Row]]:
        """A session's state, its last turn row up to ``after`` and its rows after it
        (oldest first), read in one snapshot: whether the last turn is over depends on
        the state and the rows agreeing."""
        columns = "id, kind, prompt, stopped_at, output, failed"
        self.conn.execute("BEGIN")
        try:
            state = self.conn.execute(
                "SELECT state FROM sessions WHERE session_id = $1", (session_id,)
            ).fetchone()
            before = self.conn.execute(
                f"SELECT {columns} FROM turns WHERE session_id = $1 AND id <= $2"
                " ORDER BY id DESC LIMIT 1",
                (session_id, after),
            ).fetchone()
            found = rows(
                self.conn.execute(
                    f"SELECT {columns} FROM turns WHERE session_id = $1 AND id > $2"
                    " ORDER BY id LIMIT $3",
                    (session_id, after, limit),
                )
            )
        finally:
            self.conn.execute("COMMIT")
        return (str(state[0]) if state else None), (dict(before) if before else None), found

    def message_origins(self, ids: Sequence[int]) -> list[Row]:
        """Sender, kind and link of the messages a nudge named."""
        if not ids:
            return []
        p = Params()
        return rows(
            self.conn.execute(
                f"SELECT id, sender, kind, link_id FROM messages WHERE id IN ({p.each(ids)})", p
            )
        )

    def delivered_between(self, name: str, start: float, end: float) -> list[Row]:
        """Sender, kind and link of messages handed to ``name`` between two times."""
        return rows(
            self.conn.execute(
                "SELECT id, sender, kind, link_id FROM messages WHERE recipient = $1"
                " AND delivered_at BETWEEN $2 AND $3 ORDER BY id",
                (name, start, end),
            )
        )

    def judge_turn(
        self,
        turn: JudgedTurn,
        *,
        crossing: CrossingOutput | None,
        decide: Callable[[LinkFacts], Verdict],
        notices: CrossingNotices,
        window: float,
        remind_every: float = REMIND_EVERY,
    ) -> str | None:
        """Record the verdict on one turn, once; return its outcome (None: judged already).

        For output that would cross, the link's facts are read inside the transaction and
        ``decide`` (``core.crossing.judge``) gives the verdict; the message, the budget, a
        freeze, the closing and the anchor reminder are written with it."""
        with write_transaction(self.conn) as conn:
            taken = conn.execute(
                "SELECT 1 FROM link_turns WHERE link_id = $1 AND turn_id = $2",
                (turn.link_id, turn.head),
            ).fetchone()
            if taken is not None:
                return None
            outcome, message_id = turn.outcome, None
            if crossing is not None:
                link = dict(
                    conn.execute("SELECT * FROM links WHERE id = $1", (turn.link_id,)).fetchone()
                )
                facts = self._facts(conn, link, crossing.sender, turn.at, window, remind_every)
                verdict = decide(facts)
                outcome = verdict.outcome.value
                message_id = self._write_verdict(
                    conn, link, turn.at, crossing, (facts, verdict), notices
                )
            conn.execute(
                "INSERT INTO link_turns (link_id, turn_id, last_turn, session_id, outcome,"
                " message_id, at) VALUES ($1,$2,$3,$4,$5,$6,$7)",
                (turn.link_id, turn.head, turn.last, turn.session_id, outcome, message_id, turn.at),
            )
            if outcome not in ("crossed", "held"):
                data = {"link": turn.link_id, "turn": turn.head, "outcome": outcome}
                event(conn, turn.at, "link.skipped", ROOM, turn.session_id, data=data)
            return outcome

    @staticmethod
    def _facts(
        conn: Connection,
        link: Row,
        speaker: str,
        at: float,
        window: float,
        remind_every: float,
    ) -> LinkFacts:
        link_id = int(link["id"])
        recent = conn.execute(
            "SELECT at FROM link_turns WHERE link_id = $1 AND outcome = 'crossed' AND at > $2",
            (link_id, at - window),
        ).fetchall()
        anchored = conn.execute(
            "SELECT 1 FROM timers WHERE name = $1 AND state = 'pending' AND intent = 'anchor'"
            " LIMIT 1",
            (speaker,),
        ).fetchone()
        reminded = conn.execute(
            "SELECT 1 FROM messages WHERE link_id = $1 AND recipient = $2 AND sender = $3"
            " AND kind = 'system' AND created_at > $4 AND body LIKE $5 LIMIT 1",
            (link_id, speaker, ROOM, at - remind_every, REMINDER_PREFIX + "%"),
        ).fetchone()
        return LinkFacts(
            state=LinkState(link["state"]),
            crossings=int(link["crossings"]),
            budget=int(link["budget"]),
            recent=tuple(float(r[0]) for r in recent),
            anchored=anchored is not None,
            reminded=reminded is not None,
        )

    def _write_verdict(
        self,
        conn: Connection,
        link: Row,
        at: float,
        crossing: CrossingOutput,
        judged: tuple[LinkFacts, Verdict],
        notices: CrossingNotices,
    ) -> int | None:
        """Write what the verdict says of an output that would cross; its message's id."""
        facts, verdict = judged
        link_id = int(link["id"])
        message_id = None
        if verdict.outcome in (Outcome.CROSSED, Outcome.HELD):
            crossed = verdict.outcome is Outcome.CROSSED
            message_id = self._message(
                conn,
                "link",
                crossing.sender,
                crossing.recipient,
                crossing.body,
                at,
                status="queued" if crossed else "held",
                link_id=link_id,
            )
        if verdict.breaker_held and crossing.loop_hold is not None and message_id is not None:
            hold_id, reason = crossing.loop_hold
            conn.execute("UPDATE messages SET failure = $1 WHERE id = $2", (reason, message_id))
            conn.execute(
                "INSERT INTO loop_held (message_id, hold_id) VALUES ($1, $2)", (message_id, hold_id)
            )
        if verdict.outcome is Outcome.CROSSED:
            conn.execute(
                "UPDATE links SET crossings = crossings + 1, updated_at = $1 WHERE id = $2",
                (at, link_id),
            )
        if verdict.remind:
            self._notify(conn, [(crossing.sender, notices.unanchored)], at, link_id)
            event(conn, at, "link.unanchored", ROOM, crossing.sender, data={"link": link_id})
        if verdict.freeze:
            conn.execute(
                "UPDATE links SET state = 'frozen', frozen_at = $1, updated_at = $2,"
                " freeze_reason = 'loop breaker' WHERE id = $3 AND state = 'open'",
                (at, at, link_id),
            )
            data = {"link": link_id, "reason": "loop breaker", "recent": len(facts.recent)}
            event(conn, at, "link.frozen", ROOM, None, data=data)
            self._notify(conn, notices.freeze, at, link_id)
        if verdict.close:
            conn.execute(
                "UPDATE links SET state = 'closed', closed_at = $1, updated_at = $2,"
                " close_reason = 'turn budget spent', closed_by = $3 WHERE id = $4"
                " AND state != 'closed'",
                (at, at, ROOM, link_id),
            )
            self._cancel_held(conn, link_id, "turn budget spent")
            data = {
                "link": link_id,
                "reason": "turn budget spent",
                "crossings": int(link["crossings"]) + 1,
            }
            event(conn, at, "link.closed", ROOM, None, data=data)
            crossed = verdict.outcome is Outcome.CROSSED
            self._notify(conn, notices.close if crossed else notices.closed, at, link_id)
        return message_id

    def link_turns(self, link_id: int) -> list[Row]:
        """Every verdict on a link's turns, oldest first."""
        return rows(
            self.conn.execute(
                "SELECT * FROM link_turns WHERE link_id = $1 ORDER BY at, turn_id", (link_id,)
            )
        )
