"""The ports: what the room and the workers need from the outside world.

Real adapters live in ``agent_room.adapters`` and are built by the entry points; tests
pass fakes. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from agent_room.core.native import NativeSession, Receipt, SocketFacts


class Clock(Protocol):
    """Wall-clock time in seconds since the epoch."""

    def __call__(self) -> float:
        """Now."""
        ...


class Multiplexer(Protocol):
    """The terminal multiplexer the agents run in (tmux), as the deliverer needs it."""

    def typing_refusal(
        self, socket: str | None, pane: str, agent_pid: int | None, agent_start: int | None
    ) -> str | None:
        """Why nothing may be typed into ``pane`` now; None when the agent is at its prompt."""
        ...

    def type_line(
        self,
        socket: str | None,
        pane: str,
        text: str,
        *,
        settle: float,
        still_safe: Callable[[], bool] | None = None,
        clear: Sequence[str] = (),
    ) -> bool:
        """Press ``clear`` (keys emptying the input line), type one safe line and submit it
        while ``still_safe()``; True if submitted."""
        ...

    def press_enter(self, socket: str | None, pane: str) -> None:
        """Submit what is typed."""
        ...

    def capture(self, socket: str | None, pane: str) -> str:
        """The pane's visible text."""
        ...

    # -- entering agents (the console and ``agent-room enter`` / ``exit-agent``) -------

    def pane_exists(self, socket: str | None, pane: str) -> bool:
        """Whether the pane is still there."""
        ...

    def switch_client(self, socket: str | None, pane: str) -> None:
        """Show ``pane`` in the tmux client the caller runs in (``switch-client``)."""
        ...

    def attach(self, socket: str | None, pane: str) -> int:
        """Attach this terminal to ``pane`` until the user detaches; the exit status."""
        ...

    def detach_client(self, socket: str | None, tty: str) -> None:
        """Detach the client attached from terminal ``tty`` (it gets its terminal back)."""
        ...

    def open_window(
        self, socket: str | None, cwd: str | None, argv: tuple[str, ...], *, name: str, inside: bool
    ) -> str:
        """Start ``argv`` in a new window (``inside`` tmux) or session; its pane id."""
        ...


class HeadlessRun(Protocol):
    """What a headless client run left behind."""

    @property
    def returncode(self) -> int | None:
        """The exit status; None when the run was ended for taking too long."""
        ...

    @property
    def stdout(self) -> str:
        """What the client printed (its JSON)."""
        ...

    @property
    def stderr(self) -> str:
        """What the client said on stderr."""
        ...


class HeadlessClient(Protocol):
    """An agent CLI run headless in a repository (``claude -p --output-format json``)."""

    def run(
        self, cwd: str, prompt: str, *, resume: str | None, max_turns: int, timeout: float
    ) -> HeadlessRun:
        """Ask once, with stdin closed; on ``timeout`` end the client's process group."""
        ...


class NativeRegistry(Protocol):
    """Claude Code's own registry of running sessions (``~/.claude/sessions``)."""

    @property
    def sessions_dir(self) -> Path | None:
        """The folder holding one file per session, whose file events say that an entry
        changed (None: nothing to watch)."""
        ...

    def sessions(self) -> list[NativeSession]:
        """Every live session it lists (liveness checked by the room), plugin or not."""
        ...

    def entry(self, pid: int) -> NativeSession | None:
        """The live session of process ``pid``, if the client lists one."""
        ...

    def socket_facts(self, path: str) -> SocketFacts | None:
        """Whether a messaging socket is there, whose it is and how private."""
        ...

    def peer_token(self, pid: int, path: str) -> str | None:
        """The token a client publishes for peers writing to its socket."""
        ...


class NativeTransport(Protocol):
    """The room as a peer on Claude Code's messaging sockets."""

    @property
    def socket(self) -> str | None:
        """The room's own socket, where receipts come back (None: not listening)."""
        ...

    def open(self) -> None:
        """Listen and register as a peer (once); OSError when it cannot."""
        ...

    def send(self, path: str, frame: dict[str, Any], *, token: str | None) -> None:
        """Write one frame to a client's socket; OSError when it refuses or is gone."""
        ...

    def receipts(self) -> list[Receipt | str]:
        """What came back since the last call (a string: why a line was ignored)."""
        ...
