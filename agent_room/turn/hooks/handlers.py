"""What each hook event does to the room.

SessionStart registers (or resumes) the session and tells the agent about waiting mail;
UserPromptSubmit marks it busy, receipts a nudge and stores the turn with where it came
from (``core.origins``); Notification
with a permission prompt marks it waiting; Stop records the turn's final output and
hands over waiting messages at the turn boundary; Interrupt (Codex's Escape, Gemini's
cancelled turn) ends the turn unfinished and marks it idle; SessionEnd marks it ended.
"""

from __future__ import annotations

import os

from agent_room.turn.core import states
from agent_room.turn.core.names import is_pane_id, tmux_socket_of
from agent_room.turn.core.origins import cause, classify_prompt, origin
from agent_room.turn.core.prompts import COMPACTING, RESUME_MARK, PromptKind
from agent_room.turn.hooks.payload import TEXT_KEEP, HookPayload
from agent_room.turn.room.registry import Registry, SessionFacts
from agent_room.turn.room.service import RoomCore
from agent_room.turn.store.db import write_transaction
from agent_room.turn.store.sqlite import SqliteStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


PROMPT_KEEP = 4096
"""Characters of each prompt kept in the turn log."""
OUTPUT_KEEP = TEXT_KEEP
"""Characters of each turn's final output kept (the body limit: it may cross a link)."""


def additional_context(event: str, text: str) -> dict[str, Any]:
    """The hook output that adds ``text`` to the model's context."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


class _Probe:
    """Whether a recorded process still runs, from ``/proc`` as the hook's own facts are
    (asked when a registration looks for a parent; a turn never asks)."""

    def is_alive(self, pid: int, start_ticks: int | None) -> bool:
        from agent_room.turn.procfs import is_alive

        return is_alive(pid, start_ticks)


def gather_facts(payload: HookPayload, environ: Mapping[str, str]) -> SessionFacts:
    """The session's process, pane and launcher settings, as seen from the hook."""
    from agent_room.turn.procfs import agent_process, ancestors, read_stat

    pid: int | None = None
    claude_pid = environ.get("CLAUDE_PID", "") if payload.client == "claude" else ""
    if claude_pid.isdigit():
        pid = int(claude_pid)
    else:
        found = agent_process(os.getpid())
        pid = found.pid if found else None
    stat = read_stat(pid) if pid else None
    chain = tuple((s.pid, s.start_ticks) for s in ancestors(pid)) if pid else ()
    pane = environ.get("TMUX_PANE", "")
    return SessionFacts(
        session_id=payload.session_id,
        cwd=payload.cwd,
        transcript_path=payload.transcript_path,
        pid=pid if stat else None,
        pid_start=stat.start_ticks if stat else None,
        pane=pane if is_pane_id(pane) else None,
        tmux_socket=tmux_socket_of(environ.get("TMUX")),
        agent=environ.get("AGENT_ROOM_AGENT") or payload.client,
        name=environ.get("AGENT_ROOM_NAME") or None,
        parent_hint=environ.get("AGENT_ROOM_PARENT") or None,
        ancestors=chain,
    )


def handle(
    payload: HookPayload,
    environ: Mapping[str, str],
    home: str,
    timeout: float,
    room: RoomCore | None = None,
) -> dict[str, Any] | None:
    """Apply one hook event to the room, in one transaction; return the hook's JSON
    output, if any. ``room``: an open room to use and leave open (the room's server,
    which serves many events).

    One transaction: the event is written whole or not at all (a hook that fails may
    try it again: ``hooks._handle_retrying``), and every watcher of the room wakes once
    for it, not once for each thing it changed."""
    own = room is None
    room = RoomCore(SqliteStore(home, timeout=timeout)) if room is None else room
    try:
        with write_transaction(room.store.conn):
            return _apply(room, payload, environ)
    finally:
        if own:
            room.close()


def _apply(
    room: RoomCore, payload: HookPayload, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    if payload.event == "SessionEnd":
        room.store.set_state(payload.session_id, states.ENDED, at=room.clock())
        return None
    if payload.event == "PreCompact":  # the memory worker checkpoints the session
        room.store.logevent(COMPACTING, "room", at=room.clock(), subject=payload.session_id)
        return None
    registry = Registry(room, _Probe())
    if payload.event == "SessionStart":
        return _session_start(room, registry.register(gather_facts(payload, environ)))
    if payload.event == "SubagentStop":
        _subagent(room, payload)
        return None
    session = registry.ensure(payload.session_id, lambda: gather_facts(payload, environ))
    if payload.event == "UserPromptSubmit":
        return _prompt(room, registry, session, payload)
    if payload.event == "Notification":
        if payload.notification_type == "permission_prompt":
            registry.set_state(payload.session_id, states.WAITING)
        elif payload.notification_type == "idle_prompt":
            registry.set_state(payload.session_id, states.IDLE)
        return None
    if payload.event == "Interrupt":  # Escape: the turn ends without a Stop, unfinished
        room.store.stop_turn(payload.session_id, output=None, failed=True, at=room.clock())
        registry.set_state(payload.session_id, states.IDLE)
        return None
    return _stop(room, registry, session, payload)


def _session_start(room: RoomCore, session: Mapping[str, Any]) -> dict[str, Any]:
    name = session["name"]
    waiting = room.store.unread(name)
    resumed = [m for m in waiting if m["sender"] == "room" and m["body"].startswith(RESUME_MARK)]
    if resumed:  # a checkpoint this agent was started from: handed over now, a receipt
        room.store.mark_delivered(name, [m["id"] for m in resumed], at=room.clock(), via="hook")
        room.store.mark_read(name, [m["id"] for m in resumed], at=room.clock())
    unread = len(waiting) - len(resumed)
    text = f"[agent-room] You are @{name} in the agent room."
    if unread:
        noun = "message" if unread == 1 else "messages"
        text += f" You have {unread} unread {noun}: run `agent-room inbox` to read them."
    for message in resumed:
        text += "\n\n" + message["body"].removeprefix(RESUME_MARK).strip()
    return additional_context("SessionStart", text)


def _prompt(
    room: RoomCore, registry: Registry, session: Mapping[str, Any], payload: HookPayload
) -> dict[str, Any] | None:
    """Classify the turn once, by what started it (``core.origins``), whatever the
    transport wrapped its prompt in; receipt a nudge; store the turn with its origin."""
    prompt = payload.prompt or ""
    if payload.prompt_id and room.store.has_prompt(
        payload.session_id, payload.prompt_id, prompt[:PROMPT_KEEP]
    ):
        return None  # handled already (the HTTP hook and the command hook both fired)
    name = str(session["name"])
    kind = classify_prompt(prompt)
    registry.set_state(payload.session_id, states.BUSY, new_turn=True)
    context = None
    named: list[Any] = []
    if kind.kind == PromptKind.NUDGE:
        from agent_room.turn.room.delivery import receive_named

        via = "native" if prompt.lstrip().startswith("<") else "nudge"
        context, named = receive_named(room, name, kind.message_ids, via=via)
    started = origin(kind, named)
    room.store.start_turn(
        payload.session_id,
        prompt_id=payload.prompt_id,
        kind=started,
        prompt=prompt[:PROMPT_KEEP],
        at=room.clock(),
        cause=cause(started, named),
    )
    if context:
        return additional_context("UserPromptSubmit", context)
    if kind.kind != PromptKind.NUDGE and prompt.startswith("<"):  # another session's
        from agent_room.turn.core.peer_prompt import parse_peer_prompt
        from agent_room.turn.room.peer_traffic import record_peer_message

        peer = parse_peer_prompt(prompt)
        if peer is not None:
            record_peer_message(room, session, peer)
    return None


def _stop(
    room: RoomCore, registry: Registry, session: Mapping[str, Any], payload: HookPayload
) -> dict[str, Any] | None:
    failed = payload.event == "StopFailure"
    output = payload.last_assistant_message
    room.store.stop_turn(
        payload.session_id,
        output=output[:OUTPUT_KEEP] if output is not None else None,
        failed=failed,
        at=room.clock(),
    )
    if not failed:
        from agent_room.turn.room.delivery import deliver_at_stop

        reason = deliver_at_stop(room, session)
        if reason:
            return {"decision": "block", "reason": reason}
    registry.set_state(payload.session_id, states.IDLE)
    return None


def _subagent(room: RoomCore, payload: HookPayload) -> None:
    room.store.record_subagent(
        {
            "agent_id": payload.agent_id or f"{payload.session_id}:{room.clock()}",
            "session_id": payload.session_id,
            "agent_type": payload.agent_type,
            "transcript_path": payload.agent_transcript_path,
            "output": (payload.last_assistant_message or "")[:PROMPT_KEEP],
        },
        at=room.clock(),
    )
