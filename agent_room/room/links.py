"""Links and timers as the room offers them: open, close, freeze, thaw, list, timers.

The rules come from ``core.links`` and ``core.timers``; the state from
``store.links.LinkStore``. Everything a link says to its two agents is a system message
of the room, carried by the ordinary delivery path (nudge and receipt, or the Stop hook
at the turn boundary). The crossing of turns themselves is ``room.crossing``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_room.core.links import (
    LinkSettings,
    LinkState,
    Previous,
    Role,
    carried_budget,
    check_budget,
    check_close,
    check_patterns,
    check_transition,
    links_summary,
    role_of,
    rules_text,
    spent_refusal,
)
from agent_room.room.base import RoomBase
from agent_room.store.links import LinkStore
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.bodies import check_body
from agent_room.turn.core.errors import BadInput, NotFound, Refused
from agent_room.turn.core.loops import held_reason
from agent_room.turn.core.names import OPERATOR
from agent_room.turn.core.timers import (
    Intent,
    check_text,
    fired_text,
    named_peers,
    parse_duration,
    parse_intent,
    peer_status,
    unanchored,
)
from agent_room.turn.store.loops import LoopStore

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row


def notice(link_id: int, peer: str, text: str) -> str:
    """A link notice as an agent reads it."""
    return f"[agent-room] Link #{link_id} with @{peer} {text}"


class Links:
    """The link and timer operations of one room."""

    def __init__(self, room: RoomBase) -> None:
        self.room = room
        self.store = LinkStore(room.store)

    # -- settings ---------------------------------------------------------------------

    def settings(self) -> LinkSettings:
        """The room's link settings, defaults for anything not set."""
        return LinkSettings.from_mapping(SettingsStore(self.room.store).settings())

    def configure(
        self,
        *,
        budget: int | None = None,
        loop: tuple[int, float] | None = None,
        patterns: list[str] | None = None,
        default_patterns: bool = False,
        sever_grace: float | None = None,
        budget_window: float | None = None,
    ) -> LinkSettings:
        """Change settings; a budget applies to links opened afterwards (never reset)."""
        values: dict[str, Any] = {}
        if budget_window is not None:
            if not 0 <= budget_window <= 7 * 86400:
                raise BadInput("the budget window is 0 to 7 days")
            values["budget_window"] = budget_window
        if budget is not None:
            values["budget"] = check_budget(budget)
        if loop is not None:
            values["loop_max"], values["loop_window"] = loop
        if patterns:
            values["checkpoint_patterns"] = list(check_patterns(patterns))
        elif default_patterns:
            values["checkpoint_patterns"] = None
        if sever_grace is not None:
            if not 0 <= sever_grace <= 86400:
                raise BadInput("the sever grace is 0 to 86400 seconds")
            values["sever_grace"] = sever_grace
        if values:
            SettingsStore(self.room.store).save(values, at=self.room.clock(), by=OPERATOR)
        return self.settings()

    # -- opening and closing ----------------------------------------------------------

    def _session_of(self, name: str) -> str:
        row = self.room.require_member(name)
        if not row["session_id"]:
            raise Refused(
                f"@{name} has no running agent session (a name joined by hand):"
                " a link joins two agent sessions"
            )
        if row["state"] == "ended":
            raise Refused(f"@{name}'s session has ended: a link joins two running sessions")
        return str(row["session_id"])

    def open(self, sender: str, recipient: str, text: str) -> tuple[Row, bool, int]:
        """Open a link from ``sender`` (initiator) to ``recipient`` and deliver ``text``.

        A second ``--link`` between the same two sessions reuses the live link (roles
        unchanged, no second set of rules). Returns (link, opened now, message id).
        """
        sender, recipient = self.room.check_pair(sender, recipient)
        body = check_body(text, limit=self.room.body_limit)
        self._not_looped(sender, recipient)
        mine, theirs = self._session_of(sender), self._session_of(recipient)
        budget = self._budget(sender, recipient, mine, theirs)

        def rules(link_id: int) -> list[tuple[str, str]]:
            return [
                (sender, rules_text(link_id, sender, recipient, Role.INITIATOR, budget)),
                (recipient, rules_text(link_id, recipient, sender, Role.RESPONDER, budget)),
            ]

        return self.store.open_link(
            initiator=sender,
            initiator_session=mine,
            responder=recipient,
            responder_session=theirs,
            budget=budget,
            at=self.room.clock(),
            rules=rules,
            body=body,
        )

    def _not_looped(self, sender: str, recipient: str) -> None:
        """A step the loop breaker holds takes no link message either: no way around it."""
        hold = LoopStore(self.room.store).active(sender, recipient)
        if hold is not None:
            raise Refused(f"@{sender} -> @{recipient} is {held_reason(*hold)}")

    def _budget(self, sender: str, recipient: str, mine: str, theirs: str) -> int:
        """The budget a new link between the two gets: what their last one left, if it
        closed within the window; refused when nothing is left (seed 001: no reset)."""
        settings = self.settings()
        if self.store.live_link(mine, theirs) is not None:
            return settings.budget  # the live link is reused: its own budget holds
        latest = self.store.latest_pair_link(sender, recipient)
        previous = None
        since = self.room.clock() - settings.budget_window
        if latest is not None and latest["state"] == "closed" and latest["closed_at"] >= since:
            previous = Previous(int(latest["id"]), int(latest["budget"]), int(latest["crossings"]))
        budget = carried_budget(settings.budget, previous)
        if budget <= 0 and previous is not None:
            assert latest is not None
            first, second = str(latest["initiator"]), str(latest["responder"])
            raise Refused(spent_refusal(first, second, previous, settings.budget_window))
        return budget

    def grant(self, link_id: int, count: int, *, caller: str | None) -> Row:
        """Give a link ``count`` more crossings: the operator only. On a closed link (the
        latest of its pair) it raises what the next link between the two inherits."""
        if caller is not None:
            raise Refused(f"only the operator can grant link #{link_id} more crossings")
        check_budget(count)
        link = self._link(link_id)
        a, b = str(link["initiator"]), str(link["responder"])
        notices: list[tuple[str, str]] = []
        if link["state"] == LinkState.CLOSED:
            latest = self.store.latest_pair_link(a, b)
            if latest is not None and int(latest["id"]) != link_id:
                raise Refused(
                    f"link #{link_id} is not the latest link between @{a} and @{b}:"
                    f" grant #{latest['id']}"
                )
        else:
            left = int(link["budget"]) + count - int(link["crossings"])
            notices = self._both(
                link, f"has more room: the operator granted {count} more crossings ({left} left)."
            )
        self.store.grant(link_id, count, at=self.room.clock(), by=OPERATOR, notices=notices)
        return self._link(link_id)

    def close_with(self, sender: str, recipient: str, text: str) -> tuple[int, int]:
        """Deliver ``text`` and sever the link (initiator only); return (link, message)."""
        sender, recipient = self.room.check_pair(sender, recipient)
        body = check_body(text, limit=self.room.body_limit)
        self._not_looped(sender, recipient)
        mine = self.room.require_member(sender)["session_id"]
        theirs = self.room.require_member(recipient)["session_id"]
        link = self.store.live_link(str(mine), str(theirs)) if mine and theirs else None
        if link is None:
            raise Refused(f"there is no open link between @{sender} and @{recipient}")
        link_id = int(link["id"])
        role = role_of(str(mine), link["initiator_session"], link["responder_session"])
        check_close(link_id, role, link["initiator"], operator=False)
        message_id = self.store.set_link_state(
            link_id,
            expected=("open", "frozen"),
            target="closed",
            at=self.room.clock(),
            by=sender,
            reason=f"closed by @{sender}",
            notices=[(recipient, notice(link_id, sender, f"is closed by @{sender}."))],
            closing_words=(sender, recipient, body),
        )
        if message_id is None:
            raise Refused(f"link #{link_id} was closed meanwhile")
        return link_id, message_id

    def _link(self, link_id: int) -> Row:
        link = self.store.link(link_id)
        if link is None:
            raise NotFound(f"no link #{link_id}")
        return link

    def _caller_role(self, link: Row, caller: str | None) -> Role | None:
        if caller is None:
            return None
        row = self.room.require_member(caller)
        return role_of(str(row["session_id"]), link["initiator_session"], link["responder_session"])

    def _both(self, link: Row, text: str) -> list[tuple[str, str]]:
        link_id = int(link["id"])
        a, b = str(link["initiator"]), str(link["responder"])
        return [(a, notice(link_id, b, text)), (b, notice(link_id, a, text))]

    def close(self, link_id: int, *, caller: str | None) -> None:
        """Close a link: the operator (``caller`` None) or its initiator."""
        link = self._link(link_id)
        check_transition(link_id, LinkState(link["state"]), LinkState.CLOSED)
        check_close(
            link_id, self._caller_role(link, caller), link["initiator"], operator=caller is None
        )
        by = caller or OPERATOR
        who = "the operator" if caller is None else f"@{caller}"
        done = self.store.set_link_state(
            link_id,
            expected=("open", "frozen"),
            target="closed",
            at=self.room.clock(),
            by=by,
            reason=f"closed by {who}",
            notices=self._both(link, f"is closed by {who}: nothing more crosses."),
        )
        if done is None:
            raise Refused(f"link #{link_id} was closed meanwhile")

    def freeze(self, link_id: int, *, caller: str | None) -> None:
        """Stop crossings on a link; outputs are held until a thaw. Either side may."""
        link = self._link(link_id)
        check_transition(link_id, LinkState(link["state"]), LinkState.FROZEN)
        if caller is not None and self._caller_role(link, caller) is None:
            raise Refused(f"you are not in link #{link_id}")
        who = "the operator" if caller is None else f"@{caller}"
        done = self.store.set_link_state(
            link_id,
            expected=("open",),
            target="frozen",
            at=self.room.clock(),
            by=caller or OPERATOR,
            reason=f"frozen by {who}",
            notices=self._both(
                link,
                f"is frozen by {who}: your outputs are held, not lost, until it is thawed."
                " Continue your own work.",
            ),
        )
        if done is None:
            raise Refused(f"link #{link_id} changed meanwhile: it is not open")

    def thaw(self, link_id: int, *, caller: str | None) -> None:
        """Reopen a frozen link (the operator only): held outputs cross, spending budget."""
        link = self._link(link_id)
        check_transition(link_id, LinkState(link["state"]), LinkState.OPEN)
        if caller is not None:
            raise Refused(f"only the operator can thaw link #{link_id}")
        done = self.store.set_link_state(
            link_id,
            expected=("frozen",),
            target="open",
            at=self.room.clock(),
            by=OPERATOR,
            reason=None,
            notices=self._both(link, "is open again; outputs held meanwhile now cross."),
        )
        if done is None:
            raise Refused(f"link #{link_id} changed meanwhile: it is not frozen")
        after = self._link(link_id)
        if after["crossings"] >= after["budget"]:
            self.store.set_link_state(
                link_id,
                expected=("open",),
                target="closed",
                at=self.room.clock(),
                by="room",
                reason="turn budget spent",
                notices=self._both(after, "is closed: its crossings are spent."),
            )

    def links(self, *, live_only: bool = False) -> list[Row]:
        """Links, newest first, each with ``crossings_left`` and ``held``."""
        found = self.store.links(live_only=live_only)
        for row in found:
            row["crossings_left"] = max(0, int(row["budget"]) - int(row["crossings"]))
        return found

    # -- timers -----------------------------------------------------------------------

    def set_timer(self, name: str, intent: str, duration: str, text: str) -> Row:
        """Record a timer for ``name``; return it."""
        kind = parse_intent(intent)
        seconds = parse_duration(duration)
        body = check_text(text)
        row = self.room.require_member(name)
        if kind is Intent.CHECK and not named_peers(
            body, str(row["name"]), self.room.store.member_names()
        ):
            raise BadInput(
                "a check timer reads another agent's status when it fires: name the agent"
                " to look at in its text (e.g. 'read @backend status, help if stuck')"
            )
        now = self.room.clock()
        timer_id = self.store.add_timer(
            str(row["name"]), row["session_id"], kind.value, body, at=now, due=now + seconds
        )
        timer = self.store.timer(timer_id)
        assert timer is not None
        return timer

    def cancel_timer(self, timer_id: int, *, caller: str | None) -> None:
        """Cancel a pending timer: its owner or the operator."""
        timer = self.store.timer(timer_id)
        if timer is None:
            raise NotFound(f"no timer #{timer_id}")
        if caller is not None and caller != timer["name"]:
            raise Refused(f"timer #{timer_id} belongs to @{timer['name']}")
        if timer["state"] != "pending":
            raise Refused(f"timer #{timer_id} is {timer['state']}")
        if not self.store.cancel_timer(timer_id, at=self.room.clock(), by=caller or OPERATOR):
            raise Refused(f"timer #{timer_id} fired or was cancelled meanwhile")

    def timers(self, *, pending_only: bool = True) -> list[Row]:
        """Timers: pending ones, next due first (or all, newest first)."""
        return self.store.timers(pending_only=pending_only)

    def fire_due(self) -> list[int]:
        """Fire every due timer once: ``ANCHOR: TEXT`` goes to its agent. Their ids."""
        fired = []
        now = self.room.clock()
        for timer in self.store.due_timers(now):
            body = fired_text(timer["intent"], timer["text"])
            if timer["intent"] == Intent.CHECK:
                body += "\n\n" + self._statuses(str(timer["name"]), str(timer["text"]), now)
            if self.store.fire_timer(int(timer["id"]), body, at=now) is not None:
                fired.append(int(timer["id"]))
        return fired

    def _statuses(self, owner: str, text: str, now: float) -> str:
        """The status of each agent a CHECK names, read as it fires: checking is reading."""
        peers = named_peers(text, owner, self.room.store.member_names())
        if not peers:
            return "(the agents it names are not in the room any more)"
        found = []
        for peer in peers:
            row = self.room.store.holder(peer)
            if row is None:
                found.append(
                    peer_status(
                        peer, now=now, state=None, since=None, output=None, output_at=None, links=""
                    )
                )
                continue
            [flagged] = self.flag([{"name": peer, "session_id": row["session_id"]}])
            last = self.store.last_output(str(row["session_id"] or ""))
            found.append(
                peer_status(
                    peer,
                    now=now,
                    state=str(row["state"]),
                    since=row["updated_at"],
                    output=last["output"] if last else None,
                    output_at=last["stopped_at"] if last else None,
                    links=links_summary(flagged["links"], unanchored=False),
                )
            )
        return "\n\n".join(found)

    def next_due(self) -> float | None:
        """When the next timer is due (the watcher sleeps no longer than that)."""
        return self.store.next_due()

    # -- who --------------------------------------------------------------------------

    def flag(
        self,
        sessions: list[dict[str, Any]],
        live: dict[str, list[dict[str, Any]]] | None = None,
    ) -> list[dict[str, Any]]:
        """Add each session's live links and the anchoring flag to ``who``'s rows
        (``live``: ``live_by_session``, when the caller has read it already)."""
        by_session = self.live_by_session() if live is None else live
        linked = [s["name"] for s in sessions if by_session.get(str(s["session_id"]))]
        loose = unanchored(linked, sorted(self.store.anchored_names()))
        for session in sessions:
            session["links"] = by_session.get(str(session["session_id"]), [])
            session["unanchored"] = session["name"] in loose
        return sessions

    def live_by_session(self) -> dict[str, list[dict[str, Any]]]:
        """The live links of each session that has any, by session id."""
        by_session: dict[str, list[dict[str, Any]]] = {}
        for link in self.store.links(live_only=True):
            for mine, peer, role in (
                ("initiator_session", "responder", Role.INITIATOR),
                ("responder_session", "initiator", Role.RESPONDER),
            ):
                by_session.setdefault(str(link[mine]), []).append(
                    {
                        "id": link["id"],
                        "peer": link[peer],
                        "role": role.value,
                        "state": link["state"],
                        "crossings_left": max(0, link["budget"] - link["crossings"]),
                    }
                )
        return by_session
