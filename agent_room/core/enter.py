"""Entering an agent and coming back (seed 003): what to do, decided without doing it.

``plan_enter`` turns facts about a target session (gathered by the room through the
adapters) into one move: switch the tmux client to its pane, attach to it, resume it
with ``claude --resume`` in a new window, or refuse. The console and the command line
carry the plan out with the multiplexer port. Pure; standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from agent_room.core.client_launch import resume_args

if TYPE_CHECKING:
    from collections.abc import Mapping

RESUMABLE_AGENTS = frozenset({"claude", "codex", "gemini"})
"""Agents whose sessions ``--resume`` can reopen."""

ATTACH_PAUSE = 0.2
"""Seconds between the last line a command prints and a tmux client taking the terminal
over: tmux flushes the terminal's queues then (tcflush), so lines written just before and
not yet read by the terminal would never be shown, and a pty cannot say when they have
been (tcdrain returns at once)."""

FRESH_SESSION_WAIT = 10.0
"""Seconds to wait for a just-started session to register its id (seed 003: 20 x 0.5 s)."""


class Move(StrEnum):
    """The one thing an enter (or exit) does."""

    SWITCH = "switch"
    """Switch this tmux client to the agent's pane."""
    ATTACH = "attach"
    """Not inside tmux: attach a client to the agent's pane (the console suspends)."""
    RESUME = "resume"
    """Start ``claude --resume ID`` in a new tmux window in the session's cwd, then go there."""
    REFUSE = "refuse"
    DETACH = "detach"
    """Entered from a terminal outside tmux: detach the client attached there, which
    ends the ``enter`` that attached it and gives that terminal back."""


@dataclass(frozen=True, slots=True)
class Target:
    """What the room knows about the session to enter, checked against the live system."""

    name: str
    session_id: str | None
    agent: str
    state: str
    """``idle``/``busy``/``waiting``/``ended`` as the registry has it."""
    pane: str | None
    socket: str | None
    """The tmux server the agent registered from."""
    cwd: str | None
    parent: str | None
    """The parent session id, if known."""
    process_alive: bool
    """The agent's process runs (pid and start time match)."""
    pane_alive: bool
    """The pane still exists and runs the agent."""
    transcript_missing: bool = False
    """The session's transcript file is known and absent: Claude Code writes it with the
    first turn, so a session that ended before one has nothing to resume."""
    no_conversation: bool = False
    """The session never had a turn: the room recorded none, and its transcript (if
    there is one) holds no prompt or answer. Its client cannot resume it: the pane a
    resume opens would end at once."""
    parent_name: str | None = None
    parent_pid: int | None = None
    parent_alive: bool = True
    """The parent session's process runs (or nothing is known of it)."""

    @property
    def label(self) -> str:
        """``@name`` for an agent; ``pane %N`` for a plain terminal pane gone back to."""
        return f"@{self.name}" if self.name else f"pane {self.pane}"


@dataclass(frozen=True, slots=True)
class Plan:
    """What to do, with the warnings to show first."""

    move: Move
    target: Target
    reason: str = ""
    """Why (for a refusal, the whole message)."""
    warnings: tuple[str, ...] = ()
    argv: tuple[str, ...] = ()
    """The command of a resume."""

    @property
    def needs_confirm(self) -> bool:
        """A resume starts a process: the console asks first."""
        return self.move is Move.RESUME


def resume_argv(session_id: str, claude: str = "claude") -> tuple[str, ...]:
    """``claude --resume ID``: the same session id continues (DESIGN.md 4)."""
    return (claude, "--resume", session_id)


def plan_enter(
    target: Target,
    *,
    inside_tmux: str | None,
    force: bool = False,
    claude: str = "claude",
    warn_parent: bool = True,
) -> Plan:
    """Decide how to enter ``target``.

    ``inside_tmux`` is the socket of the tmux server the caller runs in (``None`` when
    not in tmux). A live agent in a live pane is switched to (same server) or attached;
    a session live outside any pane is refused unless ``force``, since two writers would
    interleave one transcript; an ended session is resumed.
    """
    warnings: list[str] = []
    if warn_parent and target.parent is None:
        warnings.append(
            f"@{target.name} has no known parent session: exit-agent can only return to"
            " where you enter from"
        )
    elif warn_parent and target.parent_pid is not None and not target.parent_alive:
        who = f"@{target.parent_name}, " if target.parent_name else ""
        warnings.append(
            f"parent process {target.parent_pid} is no longer running"
            f" ({who}session {target.parent})"
        )
    live = target.state != "ended" and target.process_alive
    if live and target.pane and target.pane_alive:
        same_server = inside_tmux is not None and (
            target.socket is None or target.socket == inside_tmux
        )
        move = Move.SWITCH if same_server else Move.ATTACH
        return Plan(move, target, warnings=tuple(warnings))
    if target.session_id is None:
        return Plan(
            Move.REFUSE,
            target,
            reason=f"@{target.name} has no session id yet and no live pane to switch to",
        )
    if target.agent not in RESUMABLE_AGENTS:
        return Plan(
            Move.REFUSE,
            target,
            reason=f"@{target.name} is a {target.agent} session:"
            " only claude, codex and gemini sessions resume",
        )
    if target.no_conversation and not live:  # the cause, whether a file was left or not
        return Plan(
            Move.REFUSE,
            target,
            reason=f"@{target.name} has no conversation to resume: it ended before its"
            f" first turn, and {target.agent} cannot resume a session that never had one",
        )
    if target.transcript_missing:
        return Plan(
            Move.REFUSE,
            target,
            reason=f"@{target.name} has no conversation to resume: its transcript is missing"
            " (the session ended before its first turn, or the file was removed)",
        )
    if live:
        where = f"pane {target.pane} is gone" if target.pane else "it runs outside tmux"
        if not force:
            return Plan(
                Move.REFUSE,
                target,
                reason=f"@{target.name} is live elsewhere ({where}): resuming it would"
                " interleave two writers in one transcript; use --force to resume anyway",
            )
        warnings.append(f"@{target.name} is still live elsewhere ({where}): resuming anyway")
    else:
        # seed 003's words: the agent's work is done; its session is opened to be read
        warnings.append(
            f"@{target.name} already ended - entering read-only session {target.session_id}"
        )
    return Plan(
        Move.RESUME,
        target,
        warnings=tuple(warnings),
        argv=resume_argv(target.session_id, claude)
        if target.agent == "claude"
        else (target.agent, *resume_args(target.agent, target.session_id)),
    )


def parent_note(target: Target) -> str | None:
    """Seed 003: on entering, the parent session's id and the command that returns to it
    (``enter`` switches to its pane, or resumes it if it ended: never a second writer)."""
    if target.parent is None:
        return None
    who = f" (@{target.parent_name})" if target.parent_name else ""
    return (
        f"parent session: {target.parent}{who}; return to it with: agent-room enter {target.parent}"
    )


@dataclass(frozen=True, slots=True)
class Entry:
    """One recorded jump: from a session (or the console) into another session."""

    to_session: str
    from_session: str | None
    from_pane: str | None
    from_socket: str | None
    from_tty: str | None = None
    """The terminal of a jump made from outside tmux (its attached client's tty)."""


def exit_chain(
    entries: list[Entry],
    current: str,
    *,
    root: bool,
    pane_sessions: Mapping[str, str] | None = None,
) -> list[Entry]:
    """The jumps to undo from ``current``: one step back, or all the way with ``root``.

    ``entries`` are the recorded jumps, newest first. Each step back takes a jump older
    than the one before, so the walk follows the trail back in time (a session entered
    twice is walked through twice) and always ends. A jump made from a terminal that did
    not know its session has only its pane: ``pane_sessions`` (pane to the session it
    holds) carries the walk on through it.
    """
    panes = pane_sessions or {}
    chain: list[Entry] = []
    here, start = current, 0
    while True:
        found = next(
            ((i, e) for i, e in enumerate(entries[start:], start) if e.to_session == here), None
        )
        if found is None:
            break
        index, step = found
        pane = step.from_pane
        if step.from_session is None and pane is not None and pane in panes:
            step = replace(step, from_session=panes[pane])
        chain.append(step)
        if not root or step.from_session is None:
            break
        here, start = step.from_session, index + 1
    return chain
