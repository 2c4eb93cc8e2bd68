"""Session operations of the SQLite store: registration, state, turns, subagents.

Mixed into ``SqliteStore``; kept apart so each file stays readable. Each public method is
one transaction with its audit events.
"""

from __future__ import annotations

from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.params import Params
from agent_room.turn.store.sqlite_base import StoreBase, event, rows

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from agent_room.turn.store.port import Connection
    from agent_room.turn.store.sqlite_base import Row


class SessionStore(StoreBase):
    """Sessions keyed by the agent's own session id."""

    def session(self, session_id: str) -> Row | None:
        """One session by its id, whether it holds a name or not."""
        row = self.conn.execute(
            "SELECT * FROM sessions WHERE session_id = $1", (session_id,)
        ).fetchone()
        return dict(row) if row else None

    def sessions_here(self) -> list[Row]:
        """This host's sessions holding a name and not ended, as they are (no message
        counts: the healer reads these once a second, whatever the room's history)."""
        return rows(
            self.conn.execute(
                "SELECT * FROM sessions WHERE left_at IS NULL AND state != 'ended'"
                " AND coalesce(host, $1) = $2 ORDER BY started_at, rowid",
                (self.host, self.host),
            )
        )

    def live_pids(self) -> list[Row]:
        """Sessions believed running: their pid and start time, for the liveness check."""
        return rows(
            self.conn.execute(
                "SELECT session_id, name, pid, pid_start FROM sessions"
                " WHERE state != 'ended' AND pid IS NOT NULL AND coalesce(host, $1) = $2",
                (self.host, self.host),
            )
        )

    def register(
        self,
        facts: dict[str, Any],
        *,
        wanted: str,
        explicit: bool,
        at: float,
        alive: Any,
    ) -> Row:
        """Insert or refresh the session ``facts['session_id']``; return its row.

        The name: an already registered session keeps its own; otherwise ``wanted``, taken
        over from a holder that has ended or is a hand-joined placeholder; a live holder
        keeps it and the newcomer gets ``wanted-N``. ``alive(pid, start)`` tells liveness.
        """
        from agent_room.turn.core.names import unique_name

        session_id = facts["session_id"]
        with write_transaction(self.conn) as conn:
            existing = conn.execute(
                "SELECT * FROM sessions WHERE session_id = $1", (session_id,)
            ).fetchone()
            columns = {k: v for k, v in facts.items() if k != "session_id"}
            columns.setdefault("host", self.host)
            if existing is not None and existing["left_at"] is None:
                self._update(conn, existing["rowid"], {**columns, "ended_at": None}, at)
                event(
                    conn,
                    at,
                    "session.started",
                    existing["name"],
                    session_id,
                    data={"resumed": True, "pane": facts.get("pane")},
                )
                rowid = existing["rowid"]
            else:
                here = self.host

                def alive_here(pid: int, start: int | None, host: str | None = None) -> bool:
                    # another host's process cannot be judged from here: it stands
                    return (host or here) != here or bool(alive(pid, start))

                name = self._claim(conn, wanted, session_id, explicit, at, alive_here, unique_name)
                if existing is not None:  # a resumed session whose name was given up
                    conn.execute(
                        "UPDATE sessions SET name = $1, left_at = NULL WHERE rowid = $2",
                        (name, existing["rowid"]),
                    )
                    self._update(conn, existing["rowid"], {**columns, "ended_at": None}, at)
                    rowid = existing["rowid"]
                else:
                    placeholder = conn.execute(
                        "SELECT rowid FROM sessions WHERE name = $1 AND left_at IS NULL"
                        " AND session_id IS NULL",
                        (name,),
                    ).fetchone()
                    if placeholder is not None:  # adopt a name joined by hand
                        conn.execute(
                            "UPDATE sessions SET session_id = $1 WHERE rowid = $2",
                            (session_id, placeholder[0]),
                        )
                        self._update(conn, placeholder[0], columns, at)
                        rowid = placeholder[0]
                    else:
                        keys = ["name", "session_id", *columns, "started_at", "updated_at"]
                        values = [name, session_id, *columns.values(), at, at]
                        p = Params()
                        rowid = conn.execute(
                            f"INSERT INTO sessions ({', '.join(keys)})"
                            f" VALUES ({p.each(values)}) RETURNING rowid",
                            p,
                        ).fetchone()[0]
                event(
                    conn,
                    at,
                    "session.started",
                    name,
                    session_id,
                    data={"pane": facts.get("pane"), "pid": facts.get("pid")},
                )
            row = conn.execute("SELECT * FROM sessions WHERE rowid = $1", (rowid,)).fetchone()
            return dict(row)

    @staticmethod
    def _update(conn: Connection, rowid: int, columns: dict[str, Any], at: float) -> None:
        if not columns:
            return
        p = Params()
        sets = ", ".join(f"{k} = {p(value)}" for k, value in columns.items())
        conn.execute(
            f"UPDATE sessions SET {sets}, updated_at = {p(at)} WHERE rowid = {p(rowid)}", p
        )

    @staticmethod
    def _claim(
        conn: Connection,
        wanted: str,
        session_id: str,
        explicit: bool,
        at: float,
        alive: Any,
        unique_name: Any,
    ) -> str:
        holders = {
            r["name"]: r
            for r in conn.execute(
                "SELECT rowid, name, session_id, state, pid, pid_start, host FROM sessions"
                " WHERE left_at IS NULL"
            )
        }
        holder = holders.get(wanted)
        if holder is None or holder["session_id"] is None:
            return str(wanted)
        holder_live = holder["state"] != "ended" and (
            holder["pid"] is None or alive(holder["pid"], holder["pid_start"], holder["host"])
        )
        if explicit and not holder_live:
            # the name's previous session is over: the newcomer takes the name over
            conn.execute(
                "UPDATE sessions SET left_at = $1, state = 'ended',"
                " ended_at = coalesce(ended_at, $2) WHERE rowid = $3",
                (at, at, holder["rowid"]),
            )
            event(
                conn,
                at,
                "session.superseded",
                wanted,
                holder["session_id"],
                data={"by": session_id},
            )
            return str(wanted)
        return str(unique_name(wanted, set(holders)))

    def set_state(
        self, session_id: str, state: str, *, at: float, reset_blocks: bool = False
    ) -> bool:
        """Move a session to ``state``; False if the session is unknown."""
        ended = at if state == "ended" else None
        with write_transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT name, state FROM sessions WHERE session_id = $1", (session_id,)
            ).fetchone()
            if row is None:
                return False
            conn.execute(
                "UPDATE sessions SET state = $1, updated_at = $2,"
                " ended_at = coalesce($3, CASE WHEN $4 = 'ended' THEN ended_at END),"
                " stop_blocks = CASE WHEN $5 THEN 0 ELSE stop_blocks END"
                " WHERE session_id = $6",
                (state, at, ended, state, reset_blocks, session_id),
            )
            if row["state"] != state:
                event(
                    conn,
                    at,
                    "session.state",
                    row["name"],
                    session_id,
                    data={"from": row["state"], "to": state},
                )
            return True

    def settle_state(
        self, name: str, state: str, *, was: str, since: float, reason: str, at: float
    ) -> bool:
        """Move the session holding ``name`` to ``state`` from what was observed of its
        client (a lost hook healed), only if no hook has changed it since it was read
        (``was`` at ``since``); False if one has (the hook wins)."""
        with write_transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT rowid, session_id FROM sessions WHERE name = $1 AND left_at IS NULL"
                " AND state = $2 AND updated_at = $3",
                (name, was, since),
            ).fetchone()
            if row is None:
                return False
            conn.execute(
                "UPDATE sessions SET state = $1, updated_at = $2 WHERE rowid = $3",
                (state, at, row["rowid"]),
            )
            event(
                conn,
                at,
                "session.state",
                "room",
                row["session_id"] or name,
                data={"from": was, "to": state, "healed": reason, "name": name},
            )
            return True

    def mark_ended(self, ended: Iterable[tuple[str, str]], *, at: float) -> None:
        """Mark sessions whose process is gone as ended, with the reason."""
        with write_transaction(self.conn) as conn:
            for session_id, reason in ended:
                cursor = conn.execute(
                    "UPDATE sessions SET state = 'ended', ended_at = $1, updated_at = $2"
                    " WHERE session_id = $3 AND state != 'ended'",
                    (at, at, session_id),
                )
                if cursor.rowcount:
                    event(
                        conn,
                        at,
                        "session.state",
                        "room",
                        session_id,
                        data={"to": "ended", "reason": reason},
                    )

    def start_turn(
        self,
        session_id: str,
        *,
        prompt_id: str | None,
        kind: str,
        prompt: str,
        at: float,
        cause: str | None = None,
    ) -> int:
        """Record the start of a turn, with where it came from (``kind``, an origin of
        ``core.origins``) and who caused it (a peer's name, ``room``, or None for a
        person); return its id."""
        with write_transaction(self.conn) as conn:
            turn_id = conn.execute(
                "INSERT INTO turns (session_id, prompt_id, kind, prompt, started_at, cause)"
                " VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
                (session_id, prompt_id, kind, prompt, at, cause),
            ).fetchone()[0]
            return int(turn_id)

    def stop_turn(self, session_id: str, *, output: str | None, failed: bool, at: float) -> Row:
        """Close the session's open turn with its final output; return the turn row."""
        with write_transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT * FROM turns WHERE session_id = $1 ORDER BY id DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            if row is None or row["stopped_at"] is not None:
                turn_id = conn.execute(
                    "INSERT INTO turns (session_id, kind, started_at) VALUES ($1, 'unknown', $2)"
                    " RETURNING id",
                    (session_id, at),
                ).fetchone()[0]
            else:
                turn_id = row["id"]
            conn.execute(
                "UPDATE turns SET stopped_at = $1, output = $2, failed = $3 WHERE id = $4",
                (at, output, int(failed), turn_id),
            )
            return dict(conn.execute("SELECT * FROM turns WHERE id = $1", (turn_id,)).fetchone())

    def has_prompt(self, session_id: str, prompt_id: str, prompt: str) -> bool:
        """Whether a turn of the session started with this prompt, by its id and text (its
        hook already ran: one event is handled once, by whichever of the HTTP and command
        hooks came first)."""
        row = self.conn.execute(
            "SELECT 1 FROM turns WHERE session_id = $1 AND prompt_id = $2 AND prompt = $3 LIMIT 1",
            (session_id, prompt_id, prompt),
        ).fetchone()
        return row is not None

    def turns(self, session_id: str, limit: int = 50) -> list[Row]:
        """The last turns of a session, oldest first."""
        found = rows(
            self.conn.execute(
                "SELECT * FROM turns WHERE session_id = $1 ORDER BY id DESC LIMIT $2",
                (session_id, limit),
            )
        )
        found.reverse()
        return found

    def record_subagent(self, facts: dict[str, Any], *, at: float) -> None:
        """Record (or refresh) one of Claude's own subagents as a leaf of its session."""
        with write_transaction(self.conn) as conn:
            conn.execute(
                "INSERT INTO subagents (agent_id, session_id, agent_type, transcript_path,"
                " stopped_at, output) VALUES ($1, $2, $3, $4, $5, $6)"
                " ON CONFLICT(agent_id) DO UPDATE SET stopped_at = excluded.stopped_at,"
                " output = excluded.output",
                (
                    facts["agent_id"],
                    facts["session_id"],
                    facts.get("agent_type"),
                    facts.get("transcript_path"),
                    at,
                    facts.get("output"),
                ),
            )
            event(
                conn,
                at,
                "subagent.stopped",
                "room",
                facts["session_id"],
                data={"agent_id": facts["agent_id"], "type": facts.get("agent_type")},
            )

    def subagents(self) -> list[Row]:
        """Every recorded subagent."""
        return rows(self.conn.execute("SELECT * FROM subagents ORDER BY stopped_at"))

    # -- names ------------------------------------------------------------------------

    def rename(self, old: str, new: str, *, by: str, at: float) -> tuple[Row, int]:
        """Give the session holding ``old`` the name ``new``; return its row and how many
        waiting messages followed it.

        What waits for the session follows it: unread messages (held, queued, delivered,
        failed), open nudges, pending timers, the delivery note and the names on its live
        links. What was said stays as it was said: sent and read messages keep ``old``.
        """
        from agent_room.turn.core.errors import NotFound, Refused

        with write_transaction(self.conn) as conn:
            row = conn.execute(
                "SELECT rowid, session_id FROM sessions WHERE name = $1 AND left_at IS NULL",
                (old,),
            ).fetchone()
            if row is None:
                raise NotFound(f"@{old} is not in the room")
            taken = conn.execute(
                "SELECT state FROM sessions WHERE name = $1 AND left_at IS NULL", (new,)
            ).fetchone()
            if taken is not None:
                raise Refused(
                    f"@{new} is taken by another session ({taken[0]}): choose another name"
                    f" (or free it first with: agent-room leave {new})"
                )
            conn.execute(
                "UPDATE sessions SET name = $1, updated_at = $2 WHERE rowid = $3", (new, at, row[0])
            )
            moved = conn.execute(
                "UPDATE messages SET recipient = $1 WHERE recipient = $2 AND read_at IS NULL"
                " AND status IN ('held', 'queued', 'delivered', 'failed')",
                (new, old),
            ).rowcount
            conn.execute(
                "UPDATE nudges SET recipient = $1 WHERE recipient = $2 AND state = 'open'",
                (new, old),
            )
            conn.execute(
                "UPDATE timers SET name = $1 WHERE name = $2 AND state = 'pending'", (new, old)
            )
            conn.execute("DELETE FROM delivery_notes WHERE name = $1", (new,))
            conn.execute("UPDATE delivery_notes SET name = $1 WHERE name = $2", (new, old))
            if row["session_id"]:
                for side in ("initiator", "responder"):
                    conn.execute(
                        f"UPDATE links SET {side} = $1 WHERE {side}_session = $2"
                        " AND state != 'closed'",
                        (new, row["session_id"]),
                    )
            event(
                conn,
                at,
                "session.renamed",
                by,
                new,
                data={"from": old, "to": new, "session_id": row["session_id"], "moved": moved},
            )
            renamed = conn.execute("SELECT * FROM sessions WHERE rowid = $1", (row[0],)).fetchone()
            return dict(renamed), moved

    def renamed_to(self, name: str) -> str | None:
        """The name now held by the session last renamed away from ``name`` (renames
        followed), or ``None``: an agent launched as ``name`` keeps that name in its
        environment after a rename, and is still itself."""
        seen = {name}
        current = name
        while True:
            found = self.conn.execute(
                "SELECT json_extract(data, '$.to') FROM events WHERE kind = 'session.renamed'"
                " AND json_extract(data, '$.from') = $1 ORDER BY id DESC LIMIT 1",
                (current,),
            ).fetchone()
            if found is None or found[0] in seen:
                break
            current = str(found[0])
            seen.add(current)
            if self.conn.execute(
                "SELECT 1 FROM sessions WHERE name = $1 AND left_at IS NULL", (current,)
            ).fetchone():
                return current
        return None
