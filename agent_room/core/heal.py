"""States that heal: when a hook is lost, what the room can observe sets the state right.

Pure. A session's state comes from its hooks; a hook that cannot write (the room locked
past the hook's budget, a PostgreSQL server restarting) exits 0 as it must, and a lost
Stop would leave the agent ``busy`` for ever, its messages queued behind a turn that
ended long ago. The deliverer therefore looks again at every session whose state has
stood for a while: at the client's own registry (Claude Code 2.1.224 and later keep the
status idle / busy / waiting in ``~/.claude/sessions/<pid>.json``), and at the end of its
transcript (each client writes the end of a turn there: Claude Code a ``turn_duration``
or ``stop_hook_summary`` record, Codex a ``task_complete`` event, Gemini CLI a final
answer). What it sees must hold for longer than a hook may take (``GRACE``) before the
room believes it over what the hooks said: a slow hook still wins, a lost one is healed.
A timeout alone never changes a state: it only makes the room look again.

Only the safe direction is taken at once: a dialog the client reports (``waiting``)
stops typing into the pane immediately; ``idle`` (which lets the room nudge) waits out
the grace. A transcript cannot show a dialog (a tool call waiting for permission reads as
busy, like a turn at work), so it ends a ``waiting`` state only with a line written after
that state was set.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from agent_room.turn.core.states import BUSY, ENDED, IDLE, WAITING

STALE_AFTER = 3.0
"""Seconds a busy or waiting state stands before the deliverer looks again."""
GRACE = 5.0
"""Seconds an observation must hold before it overrides the hooks: longer than a hook
spends on the room in all (``hooks.HOOK_BUDGET``), so that a slow hook is never raced."""
REGISTRY_GRACE = 1.0
"""The grace for Claude Code's registry: it writes ``idle`` only once the turn's Stop
hooks have run (measured with 2.1.330: the status time follows a Stop hook that spent
its 4 s budget), so no hook of that turn can still be writing."""
RECHECK = 1.0
"""Seconds between two looks at one session."""
IDLE_RECHECK = 30.0
"""Seconds between two looks at an idle session whose registry entry is watched and did
not change: file events say when to look; this only catches one the kernel dropped."""


class Source(StrEnum):
    """Where an observation comes from (said in the audit event)."""

    REGISTRY = "the client's registry"
    TRANSCRIPT = "the transcript"
    SCREEN = "the pane"


@dataclass(frozen=True, slots=True)
class Observation:
    """What the client shows of a session now."""

    state: str
    """``idle``, ``busy`` or ``waiting``."""
    source: Source
    since: float | None = None
    """When the client says the session came to that state (its own clock), if it says."""


@dataclass(frozen=True, slots=True)
class Heal:
    """A state the room takes over from what it observed, and why."""

    state: str
    reason: str


@dataclass(frozen=True, slots=True)
class Seen:
    """What the deliverer last observed of a session, and since when (its memory)."""

    state: str
    since: float


def held_since(previous: Seen | None, observation: Observation, now: float) -> Seen:
    """Since when the observation has held: the client's own time when it gives one,
    else the first pass that saw it (a change starts the count again)."""
    if observation.since is not None:
        return Seen(observation.state, min(observation.since, now))
    if previous is not None and previous.state == observation.state:
        return previous
    return Seen(observation.state, now)


def verdict(
    *,
    state: str,
    state_since: float,
    observation: Observation | None,
    seen: Seen | None,
    now: float,
    grace: float | None = None,
) -> Heal | None:
    """The state the room should take for a session, or None to keep its own.

    ``state`` is the room's (set by the hooks at ``state_since``); ``seen`` is the
    observation with the time it has held since (``held_since``); ``grace`` defaults to
    the observation's source's (``REGISTRY_GRACE``, else ``GRACE``)."""
    if observation is None or seen is None or state in (ENDED, observation.state):
        return None
    if grace is None:
        grace = REGISTRY_GRACE if observation.source is Source.REGISTRY else GRACE
    said = f"{observation.source} says {observation.state}"
    if observation.state == WAITING:  # a dialog is open: stop typing now
        return Heal(WAITING, f"{said} (a dialog is open)")
    settled = now - seen.since >= grace and now - state_since >= grace
    if not settled:
        return None
    if observation.state == IDLE and state in (BUSY, WAITING):
        return Heal(IDLE, f"{said}: the turn ended and its hook was lost")
    if observation.state == BUSY and state == WAITING:
        if observation.source is Source.TRANSCRIPT and not _written_after(observation, state_since):
            return None  # a transcript cannot show a dialog: a tool call waiting reads as busy
        return Heal(BUSY, f"{said}: the dialog was answered")
    return None


def _written_after(observation: Observation, state_since: float) -> bool:
    """Whether the client wrote what it shows after the room's state was set (a
    ``tool_result`` after the dialog closed, rather than the ``tool_use`` that opened it)."""
    return observation.since is not None and observation.since > state_since


def due(
    state: str, state_since: float, last_look: float | None, now: float, *, quiet: bool = False
) -> bool:
    """Whether to look at a session now: a state other than idle that has stood for
    ``STALE_AFTER``, at most every ``RECHECK`` seconds. Idle sessions are looked at in
    the client's registry only (or on a Codex or Gemini CLI pane); ``quiet``: an idle
    session whose registry entry is watched for changes and showed none since the last
    look, looked at again only every ``IDLE_RECHECK`` (the net for an event lost)."""
    if state == ENDED:
        return False
    if last_look is not None and now - last_look < RECHECK:
        return False
    if state == IDLE:
        return not quiet or last_look is None or now - last_look >= IDLE_RECHECK
    return now - state_since >= STALE_AFTER


SCREEN_CLIENTS = frozenset({"codex", "gemini"})
"""Clients whose own dialogs the room reads off their pane: they keep no registry, and
Codex's dialogs before its first prompt (a model upgrade offer) fire no hook at all."""
_POINTERS = ("\u203a", "\u25cf", "\u276f", ">")
"""What marks the chosen option of a client's dialog: Codex's U+203A, Gemini CLI's U+25CF."""


def shows_dialog(screen: str) -> bool:
    """Whether a pane shows a client's own dialog: a numbered choice with its first
    option marked (Codex 0.169: ``1. Try new model``, ``1. Yes, proceed (y)``; Gemini
    CLI 0.61: ``1. Allow once``, ``1. Trust folder``, each after its pointer). Typing
    there would answer it."""
    for line in screen.splitlines():
        text = line.strip().lstrip("\u2502").strip()  # inside a box's border
        for pointer in _POINTERS:
            if text.startswith(pointer) and text[len(pointer) :].lstrip().startswith("1. "):
                return True
    return False


def screen_observation(state: str, screen: str) -> Observation | None:
    """What a Codex or Gemini CLI pane says: a dialog (``waiting``), or, for a session
    the room has waiting, none any more (``idle``, once it holds past the grace)."""
    if shows_dialog(screen):
        return Observation(WAITING, Source.SCREEN)
    if state == WAITING:
        return Observation(IDLE, Source.SCREEN)
    return None


_CLAUDE_ENDS = frozenset({"turn_duration", "stop_hook_summary"})
_CODEX_ENDS = frozenset({"task_complete", "turn_aborted"})
_SKIPPED = frozenset(
    {
        "attachment",
        "progress",
        "file-history-snapshot",
        "last-prompt",
        "mode",
        "permission-mode",
        "atis-latch",
        "cost-state",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "summary",
        "info",
        "token_usage_record",
    }
)


def _record_state(record: object) -> str | None:
    """What one transcript record says of its turn: ``idle`` (it ended), ``busy`` (it
    goes on), None (bookkeeping). Claude Code's, Codex's and Gemini CLI's alike."""
    if not isinstance(record, dict):
        return None
    kind = record.get("type")
    if kind in _SKIPPED or record.get("isSidechain"):
        return None
    if kind == "system":  # Claude Code: the turn's end, after its Stop hooks ran
        return IDLE if record.get("subtype") in _CLAUDE_ENDS else None
    if kind == "event_msg":  # Codex's rollout
        payload = record.get("payload")
        event = payload.get("type") if isinstance(payload, dict) else None
        if event in _CODEX_ENDS:
            return IDLE
        return BUSY if event == "task_started" else None
    if kind == "gemini":  # Gemini CLI: a final answer has no tool calls left to run
        return BUSY if record.get("toolCalls") else IDLE
    if kind == "assistant":
        message = record.get("message")
        stop = message.get("stop_reason") if isinstance(message, dict) else None
        return None if stop == "end_turn" else BUSY  # the end is the system record
    if kind == "user" and _local_command(record):
        return None
    if kind in ("user", "response_item", "turn_context"):
        return BUSY
    return None


_LOCAL_MARKS = ("<command-name>", "<local-command-")


def _local_command(record: dict[str, object]) -> bool:
    """Whether a Claude Code ``user`` record is a command run in the client itself
    (``/exit``, ``/cost``: its name, its output, the caveat before them), not a prompt:
    since 2.1.332 they are written as ``user`` records (before, as ``system`` ones)."""
    if record.get("isMeta") or record.get("rowSource") in ("local", "harness"):
        return True
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, str) and content.lstrip().startswith(_LOCAL_MARKS)


def transcript_state(lines: Iterable[str | bytes]) -> str | None:
    """Whether a transcript's last turn has ended (``idle``) or goes on (``busy``), from
    its last records; None when they say nothing (a cut or foreign line is skipped)."""
    found: str | None = None
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        said = _record_state(record)
        if said is not None:
            found = said
    return found
