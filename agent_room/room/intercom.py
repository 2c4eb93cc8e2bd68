"""The intercom's use cases: ask a headless agent in another repository, list and
forget its sessions, import the seed's state file.

Who asks (the parent) comes from the caller; the client is a ``HeadlessClient`` port,
so tests pass a fake and the CLI the real Claude Code. Every ask leaves its question and
answer (or why it failed) in the room; the reasoning is told line by line to ``say``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agent_room.core.intercom import (
    DEFAULT_MAX_TURNS,
    DEFAULT_SESSION_LIMIT,
    OPERATOR_PARENT,
    Decision,
    IntercomSession,
    cleanup,
    decide,
    preview_of,
    session_cost,
    topic_of,
)
from agent_room.core.intercom_state import ClientAnswer, parse_answer
from agent_room.core.ports import HeadlessClient, HeadlessRun
from agent_room.room.service import Room
from agent_room.room.usage import Usage
from agent_room.store.intercom import IntercomStore
from agent_room.store.settings import SettingsStore
from agent_room.turn.core.errors import BadInput, RoomError
from agent_room.turn.core.names import is_valid_name, name_from_cwd

if TYPE_CHECKING:
    from agent_room.turn.store.sqlite_base import Row  # a type alias only the checker knows

Say = Callable[[str], None]

MAX_TURNS_KEY = "intercom.max_turns"
SESSION_LIMIT_KEY = "intercom.session_limit"
CLAIM_GRACE = 60.0
"""Seconds past an ask's timeout after which its claim on a session lapses (a crash)."""
UNKNOWN_SESSION = "No conversation found"
"""What Claude Code prints when asked to resume a session it does not know."""


MAX_TURNS = "error_max_turns"
"""The client's subtype when ``--max-turns`` stopped it: its session and cost are real."""


class AskFailed(RoomError):
    """The client gave no answer: it failed, timed out, or reported an error."""


def _quiet(_line: str) -> None:
    """The default ``say``: the reasoning goes to the audit log only."""


class Asker:
    """Who asks: the parent of the sessions (a Claude Code session id, or the operator)
    and the name the room shows as the sender."""

    def __init__(self, parent: str, name: str) -> None:
        self.parent = parent
        self.name = name


class Intercom:
    """The intercom of one room."""

    def __init__(self, room: Room, client: HeadlessClient | None = None) -> None:
        self.room = room
        self.store = IntercomStore(room.store)
        self.client = client

    # -- who and where ----------------------------------------------------------------

    def asker(self, environ: Mapping[str, str]) -> Asker:
        """The asking session: ``CLAUDE_CODE_SESSION_ID``, else the session registered
        for ``AGENT_ROOM_NAME`` or the tmux pane; else the operator, a parent of its own."""
        store = self.room.store
        session_id = environ.get("CLAUDE_CODE_SESSION_ID") or ""
        row = store.session(session_id) if session_id else None
        if row is None and environ.get("AGENT_ROOM_NAME"):
            name = environ["AGENT_ROOM_NAME"]
            row = store.holder(name) if is_valid_name(name) else None
        if row is None and environ.get("TMUX_PANE"):
            row = store.holder_of_pane(environ["TMUX_PANE"])
        if row is not None and row["session_id"]:
            return Asker(str(row["session_id"]), str(row["name"]))
        if session_id:
            return Asker(session_id, environ.get("AGENT_ROOM_NAME") or "agent")
        return Asker(OPERATOR_PARENT, OPERATOR_PARENT)

    def repository(self, target: str) -> tuple[str, str]:
        """REPO as (directory, label): a directory, or a room member's working directory."""
        if os.path.isdir(target):  # noqa: PTH112 - paths stay strings here
            path = os.path.realpath(target)
            return path, name_from_cwd(path)
        if is_valid_name(target.removeprefix("@")):
            name = target.removeprefix("@")
            row = self.room.store.holder(name)
            if row is not None:
                cwd = row["cwd"]
                if not cwd or not os.path.isdir(cwd):  # noqa: PTH112
                    raise BadInput(f"@{name}'s working directory {cwd or '(unknown)'} is gone")
                return os.path.realpath(cwd), name
        raise BadInput(f"{target} is not a directory, nor the name of someone in the room")

    # -- settings ---------------------------------------------------------------------

    def settings(self) -> dict[str, int]:
        """``max_turns`` and ``session_limit``, the room's or the defaults."""
        stored = SettingsStore(self.room.store).settings()
        return {
            "max_turns": int(stored.get(MAX_TURNS_KEY, DEFAULT_MAX_TURNS)),
            "session_limit": int(stored.get(SESSION_LIMIT_KEY, DEFAULT_SESSION_LIMIT)),
        }

    def change_settings(self, *, max_turns: int | None, session_limit: int | None) -> None:
        """Store new defaults (the operator's)."""
        values = {MAX_TURNS_KEY: max_turns, SESSION_LIMIT_KEY: session_limit}
        values = {k: v for k, v in values.items() if v is not None}
        if values:
            SettingsStore(self.room.store).save(values, at=self.room.clock(), by=OPERATOR_PARENT)

    # -- asking -----------------------------------------------------------------------

    def sessions(self, repo: str | None = None) -> list[IntercomSession]:
        """The stored sessions as the decision sees them (busy while an ask holds one)."""
        now = self.room.clock()
        return [_session(r, now) for r in self.store.sessions(repo)]

    def ask(
        self,
        target: str,
        question: str,
        asker: Asker,
        *,
        max_turns: int | None = None,
        timeout: float,
        force_new: bool = False,
        resume_id: str | None = None,
        say: Say = _quiet,
    ) -> dict[str, Any]:
        """Put ``question`` to the agent of ``target``; the record of the ask.

        Raises ``AskFailed`` (recorded in the room) when no answer came.
        """
        question = question.strip()
        try:
            if not question:
                raise BadInput(  # noqa: TRY301 - recorded below, as a bad REPO is
                    "the question is empty: give it as QUESTION, --file FILE or on stdin"
                )
            repo, label = self.repository(target)
        except BadInput as exc:
            self.store.record_failure(
                None,
                asker=asker.name,
                label=target,
                reason=str(exc),
                at=self.room.clock(),
                data={"repo": target},
            )
            raise
        if self.client is None:
            raise RoomError("no client to ask with")
        turns = max_turns if max_turns is not None else self.settings()["max_turns"]
        started = time.monotonic()
        decision = self._decide(repo, asker, question, timeout, force_new, resume_id)
        for line in decision.lines:
            say(line)
        record: dict[str, Any] = {
            "repo": repo,
            "label": label,
            "parent": asker.parent,
            "asker": asker.name,
            "decision": decision.action,
            "reason": decision.reason,
            "lines": list(decision.lines),
        }
        ask_id = self.store.record_ask(
            asker=asker.name,
            label=label,
            question=question,
            at=self.room.clock(),
            data={k: record[k] for k in ("repo", "parent", "decision", "reason", "lines")},
        )
        record["ask_id"] = ask_id
        try:
            answer, resumed = self._run(repo, question, decision, turns, timeout, record, say)
        except RoomError as exc:
            self.store.record_failure(
                ask_id,
                asker=asker.name,
                label=label,
                reason=str(exc),
                at=self.room.clock(),
                data={"repo": repo, "decision": record["decision"]},
            )
            raise
        finally:
            if decision.resume:
                self.store.release(decision.resume)
        record["duration_s"] = round(time.monotonic() - started, 3)
        kept = self._keep(record, answer, resumed, question, say)
        if answer.subtype == MAX_TURNS:
            line = (
                f"[Intercom] Stopped at the turn limit ({turns}) before an answer: session"
                f" {answer.session_id} is kept (${kept['session_cost_usd']:.4f});"
                " ask again to go on, or give a higher --max-turns"
            )
            say(line)
            kept["lines"].append(line)
            kept["stopped"] = "max_turns"
        return kept

    def _decide(
        self,
        repo: str,
        asker: Asker,
        question: str,
        timeout: float,
        force_new: bool,
        resume_id: str | None,
    ) -> Decision:
        """The decision, with the chosen session claimed for this ask; a session another
        ask claimed first is busy, and the decision is taken again without it."""
        while True:
            now = self.room.clock()
            decision = decide(
                self.sessions(repo),
                repo=repo,
                parent=asker.parent,
                question=question,
                now=now,
                force_new=force_new,
                resume_id=resume_id,
            )
            if decision.resume is None:
                return decision
            known = self.store.session(decision.resume) is not None
            if not known or self.store.claim(
                decision.resume, at=now, until=now + timeout + CLAIM_GRACE
            ):
                return decision
            if resume_id is not None:
                raise AskFailed(f"session {resume_id} is busy with another ask: try again later")

    def _run(
        self,
        repo: str,
        question: str,
        decision: Decision,
        max_turns: int,
        timeout: float,
        record: dict[str, Any],
        say: Say,
    ) -> tuple[ClientAnswer, bool]:
        assert self.client is not None
        resume = decision.resume
        started = time.monotonic()
        run = self.client.run(repo, question, resume=resume, max_turns=max_turns, timeout=timeout)
        if resume and run.returncode not in (0, None) and UNKNOWN_SESSION in run.stderr:
            line = f"[Intercom] The client no longer knows session {resume}: starting a new one"
            say(line)
            record["lines"].append(line)
            record["fallback"] = f"session {resume} unknown to the client"
            record["decision"] = "new"
            self.store.release(resume)
            self.store.forget([resume], at=self.room.clock(), by="intercom", why="unknown")
            resume = None
            run = self.client.run(repo, question, resume=None, max_turns=max_turns, timeout=timeout)
        record["client_s"] = round(time.monotonic() - started, 3)
        return _answer(run, timeout), resume is not None

    def _keep(
        self,
        record: dict[str, Any],
        answer: ClientAnswer,
        resumed: bool,
        question: str,
        say: Say,
    ) -> dict[str, Any]:
        """Store the session's new figures and the answer; clean up; the full record."""
        now = self.room.clock()
        old = self.store.session(answer.session_id)
        before = float(old["cost_usd"]) if old else 0.0
        total = session_cost(before, answer.cost_usd, resumed=resumed and old is not None)
        session = {
            "session_id": answer.session_id,
            "repo": record["repo"],
            "label": record["label"],
            "topic": old["topic"] if old else topic_of(question),
            "created_at": old["created_at"] if old else now,
            "last_used_at": now,
            "parent": record["parent"],
            "asker": record["asker"],
            "message_count": (int(old["message_count"]) if old else 0) + 1,
            "last_message": preview_of(question),
            "cost_usd": total,
            "turns": (int(old["turns"]) if old else 0) + answer.turns,
            "status": "active",
        }
        record.update(
            session_id=answer.session_id,
            result=answer.result,
            cost_usd=round(total - before, 6),
            session_cost_usd=total,
            turns=answer.turns,
            session_turns=session["turns"],
            message_count=session["message_count"],
            topic=session["topic"],
            duration_ms=answer.duration_ms,
            subtype=answer.subtype,
        )
        data = {
            k: record[k]
            for k in ("repo", "session_id", "decision", "cost_usd", "turns", "duration_ms")
        }
        record["answer_id"] = self.store.record_answer(
            session, ask_id=record["ask_id"], answer=answer.result, at=now, data=data
        )
        Usage(self.room).record_ask(
            answer.data,
            asker=record["asker"],
            label=record["label"],
            ask_id=str(record["ask_id"]),
            cumulative=resumed and old is not None and answer.cost_usd >= before,
        )
        limit = self.settings()["session_limit"]
        plan = cleanup(
            self.sessions(record["repo"]), repo=record["repo"], parent=record["parent"], limit=limit
        )
        if plan.remove:
            self.store.forget(plan.remove, at=now, by="intercom", why="session limit")
            for line in plan.lines:
                say(line)
            record["lines"] += list(plan.lines)
        record["removed"] = list(plan.remove)
        return record


def _session(row: Row, now: float) -> IntercomSession:
    claimed = row["claimed_until"]
    return IntercomSession(
        session_id=str(row["session_id"]),
        repo=str(row["repo"]),
        topic=str(row["topic"]),
        created_at=float(row["created_at"]),
        last_used_at=float(row["last_used_at"]),
        parent=str(row["parent"]),
        message_count=int(row["message_count"]),
        last_message=str(row["last_message"]),
        cost_usd=float(row["cost_usd"]),
        turns=int(row["turns"]),
        busy=claimed is not None and float(claimed) >= now,
    )


def _answer(run: HeadlessRun, timeout: float) -> ClientAnswer:
    """The client's answer, or ``AskFailed`` saying in one line why there is none."""
    if run.returncode is None:
        raise AskFailed(f"the client took longer than {timeout:g} s and was ended")
    try:
        answer = parse_answer(run.stdout)
    except BadInput as exc:
        if run.returncode == 0:
            raise AskFailed(str(exc)) from None
        said = _first_line(run.stderr) or _first_line(run.stdout) or "no message"
        raise AskFailed(f"the client exited with status {run.returncode}: {said}") from None
    if answer.subtype == MAX_TURNS:
        return answer  # stopped short, but a session that cost something: it is kept
    if answer.is_error or run.returncode != 0:
        said = _first_line(answer.result) or _first_line(run.stderr) or "no message"
        kind = answer.subtype or f"status {run.returncode}"
        raise AskFailed(f"the client reported an error ({kind}): {said}")
    return answer


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""
