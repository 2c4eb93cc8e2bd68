"""``agent-room start`` / ``stop``: the seed's ``agent-chat NAME`` launcher (``start.sh``).

The agent is the pane's initial command, never typed into a fresh shell (DESIGN.md 4):
tmux gets the argv as separate arguments and ``execvp``s it with no shell in between, via
``pane_exec``, which gives the agent the environment of the shell that ran ``start``
(a running tmux server does not pass the client's environment on; ``-e`` would put keys on
tmux's command line) and drops variables a launching agent would leak, such as
``CLAUDECODE``, which makes Claude Code refuse to start nested. So the pane's pid is
the agent, which is how the room tells that a pane runs its registered agent. Sessions
are targeted as ``=ac-NAME``: a bare ``-t ac-NAME`` matches by prefix and would hit
``ac-NAMEX``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agent_room.adapters.claude_files import trusted
from agent_room.adapters.processes import SystemProbe
from agent_room.cli import worktrees
from agent_room.cli.background import ensure_deliverer
from agent_room.cli.pane_exec import PANE_OWN, pane_command, write_env_file
from agent_room.cli.worktrees import start_worktree
from agent_room.config.settings import RoomSettings
from agent_room.core.client_launch import ci_markers
from agent_room.core.enter import ATTACH_PAUSE
from agent_room.demo.folder import forget_hint, stopped_demo
from agent_room.plugin import claude_flags
from agent_room.room.access import (
    ENV_URL,
    HOOKS_VIA_HTTP,
    WITH_TOKEN,
    agent_access,
    await_serving,
    http_hooks,
)
from agent_room.room.clients import client_launch
from agent_room.room.service import Room
from agent_room.turn import procfs
from agent_room.turn.core.errors import BadInput, NotFound, Refused, RoomError
from agent_room.turn.core.names import is_valid_name, parse_name
from agent_room.turn.core.printable import printable
from agent_room.turn.room.registry import Registry
from agent_room.turn.store.home import ensure_room_dir, room_home

# The parser reads this module to build `--help`, which loads no room, pydantic or
# textual (tests/test_layering.py): what only `start` or `stop` needs (the room, its
# access and clients, worktrees) loads inside the function that needs it.

if TYPE_CHECKING:
    from agent_room.config.settings import RoomSettings
    from agent_room.room.service import Room

    Process = tuple[int, int | None]
    """A process's identity: pid and start ticks."""

AGENT_KINDS = ("claude", "codex", "gemini", "command")
"""``command`` runs AGENT-ARGS as the whole command line (tests use a stand-in agent)."""

TAG = "@agent_room_name"
"""tmux user option naming the agent of a window opened inside tmux, so ``stop`` finds
that window and never another one that merely has the same name."""

STOP_GRACE = 5.0
LEAKED: tuple[str, ...] = ("CLAUDECODE", "CLAUDE_PID", "CLAUDE_CODE_SESSION_ID")
LEAKED += ("CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_MESSAGING_SOCKET", "AGENT_ROOM_PARENT")
LEAKED += ("AGENT_ROOM_MCP_TOKEN", "AGENT_ROOM_MCP_URL", "AGENT_ROOM_HOOKS_HTTP")
"""Variables of whoever runs the launcher that would misidentify the new agent."""


class _Tmux:
    """The tmux command line on the default server, or on the ``tmux`` setting's socket."""

    def __init__(self, environ: dict[str, str], socket: str | None) -> None:
        found = shutil.which("tmux")
        if found is None:
            raise NotFound("tmux is not installed (agent-room start needs tmux 3.2 or later)")
        self.socket = socket
        self.argv = [found, *(["-S", self.socket] if self.socket else [])]
        # a server started by this call keeps our environment as its global one
        self.env = {k: v for k, v in environ.items() if k not in LEAKED}
        self.said = ""
        """What the last command printed on stderr (tmux can say why and still exit 0)."""

    def __call__(self, *args: str, check: bool = True) -> list[str]:
        proc = subprocess.run(
            [*self.argv, *args], capture_output=True, text=True, env=self.env, check=False
        )
        self.said = proc.stderr.strip().replace("\n", "; ")
        if proc.returncode and check:
            detail = proc.stderr.strip() or f"exit status {proc.returncode}"
            raise Refused(f"tmux {args[0]} failed: {detail}")
        return proc.stdout.splitlines() if proc.returncode == 0 else []

    def has_session(self, session: str) -> bool:
        return bool(self("list-sessions", "-F", "#{session_name}", check=False).count(session))

    def tagged_window(self, name: str) -> str | None:
        """The id of the window opened for ``name`` inside tmux, if one is open."""
        for line in self("list-windows", "-a", "-F", f"#{{window_id}} #{{{TAG}}}", check=False):
            window, _, tag = line.partition(" ")
            if tag == name:
                return window
        return None

    def new_session(self, session: str, options: list[str], command: list[str]) -> str:
        """Start ``session`` running ``command``; return its pane id.

        tmux can exit 0 without printing the new pane (``-P``) when the server it reached
        could not serve the command: one exiting as its last session ended, or one that
        failed to create its socket (it says why on stderr and still exits 0). So the pane
        is asked for, and a session that is not there is started once more.
        """
        for _ in range(2):
            out = self("new-session", "-d", "-s", session, *options, "--", *command)
            said = self.said
            if out:
                return out[0].partition(" ")[0]
            for _ in range(10):
                panes = self("list-panes", "-t", f"={session}", "-F", "#{pane_id}", check=False)
                if panes:
                    return panes[0]
                time.sleep(0.05)
        raise Refused(f"tmux did not start session {session}: {said or 'it printed nothing'}")

    def attach_hint(self, session: str) -> str:
        socket = f"-S {self.socket} " if self.socket else ""
        return f"tmux {socket}attach -t {session}"


def _binary(program: str, hint: str) -> str:
    found = shutil.which(program)
    if found is None:
        raise NotFound(f"{program} not found: {hint}")
    return str(Path(found).absolute())


NPM_PACKAGES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}
"""Each client's npm package, named where the client is missing."""


def _client(kind: str, settings: RoomSettings) -> str:
    """The client's program: its setting's (refused as such when it names none, so the
    hint is not to set what is set), else ``kind`` on the PATH."""
    variable = f"AGENT_ROOM_{kind.upper()}"
    given = settings.program(kind)
    if given:
        return _binary(given, f"point {variable} at the client, or unset it")
    other = "" if kind == "claude" else ", or use --agent command -- ARGS"
    install = f"npm install -g {NPM_PACKAGES[kind]}, or set {variable}{other}"
    return _binary(kind, f"{install} (agent-room doctor checks the clients)")


def agent_argv(kind: str, agent_args: list[str], settings: RoomSettings) -> list[str]:
    """The agent's command line: its binary (absolute) and arguments."""
    if kind == "claude":
        return [_client(kind, settings), *claude_flags(), *agent_args]
    if kind in {"codex", "gemini"}:
        return [_client(kind, settings), *agent_args]
    if kind == "command":
        if not agent_args:
            raise BadInput("--agent command needs the command after --, e.g. -- my-agent --flag")
        return [_binary(agent_args[0], "give a program on PATH or a path"), *agent_args[1:]]
    raise BadInput(f"unknown agent kind {kind!r}: use one of {', '.join(AGENT_KINDS)}")


def _agent_room_bin() -> str:
    """The running ``agent-room`` script, so the agent's hooks use this same install."""
    script = Path(sys.argv[0])
    candidates = [script] if script.name == "agent-room" else []
    candidates.append(Path(sys.executable).parent / "agent-room")
    found = shutil.which("agent-room")
    candidates += [Path(found)] if found else []
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.absolute())
    raise NotFound("cannot find the agent-room command beside this Python or on PATH")


def agent_env(name: str, label: str, environ: dict[str, str]) -> dict[str, str]:
    """The room's variables for the new agent (``AGENT_ROOM_PARENT``: whoever launches)."""
    env = {
        "AGENT_ROOM_NAME": name,
        "AGENT_ROOM_HOME": str(Path(room_home(environ)).resolve()),
        "AGENT_ROOM_BIN": _agent_room_bin(),
        "AGENT_ROOM_AGENT": label,
    }
    parent = environ.get("AGENT_ROOM_NAME") or environ.get("CLAUDE_CODE_SESSION_ID")
    if parent and parent != name:
        env["AGENT_ROOM_PARENT"] = parent
    return env


def _window_target(tmux: _Tmux, environ: dict[str, str]) -> list[str] | None:
    """``-t SESSION:`` of the session we run in (from $TMUX_PANE, else $TMUX), or None
    when we do not run in a pane of the server the agent goes to."""
    here, _, rest = environ.get("TMUX", "").partition(",")
    if not here or (tmux.socket and Path(here).resolve() != Path(tmux.socket).resolve()):
        return None
    pane = environ.get("TMUX_PANE", "")
    found = tmux("display-message", "-p", "-t", pane, "#{session_id}", check=False) if pane else []
    session = found[0] if found else "$" + rest.rpartition(",")[2]
    return ["-t", f"{session}:"] if session[1:].isdigit() else []


def _refuse_if_running(tmux: _Tmux, name: str) -> None:
    session = f"ac-{name}"
    if tmux.has_session(session):
        raise Refused(
            f"@{name} is already running in tmux session {session}"
            f" (attach: {tmux.attach_hint(session)})"
        )
    window = tmux.tagged_window(name)
    if window:
        raise Refused(f"@{name} is already running in tmux window {window} ({name})")


def _worktree(branch: str | None, name: str, cwd: Path) -> Path:
    """With ``--worktree`` (``branch``, empty for the agent's name), the agent's own
    worktree of ``cwd``'s repository (made, or reused), where it starts; else ``cwd``. The
    room makes it rather than the client's own flag: the same place, branch and base for
    every client, known to the room."""
    if branch is None:
        return cwd
    folder, said = start_worktree(name, cwd, branch)
    print(f"@{name}: {said}", file=sys.stderr)
    return folder


def _client_setup(
    kind: str,
    name: str,
    cwd: Path,
    argv: list[str],
    env: dict[str, str],
    environ: dict[str, str],
) -> tuple[list[str], tuple[str, ...]]:
    """The agent's command line with what its client needs to be in the room, and the
    wrapper that runs it with its secret; ``env`` gains the client's variables."""
    wrapper: tuple[str, ...] = ()
    if kind != "command":  # the room's tools over MCP, with a secret of its own
        env.update(agent_access(env["AGENT_ROOM_HOME"], name))
        wrapper = WITH_TOKEN
    if kind == "claude":  # its turns' hooks to the room's server, without a process each
        settings = json.dumps(http_hooks(env[ENV_URL]), separators=(",", ":"))
        argv = [argv[0], "--settings", settings, *argv[1:]]
        env[HOOKS_VIA_HTTP] = "1"
    if kind in {"codex", "gemini"}:  # its hooks, trust and permissions: see room.clients
        extra, client_env = client_launch(
            kind,
            name=name,
            cwd=str(cwd),
            home=env["AGENT_ROOM_HOME"],
            environ=environ,
            mcp_url=env[ENV_URL],
        )
        argv = [argv[0], *extra, *argv[1:]]
        env.update(client_env)
    return argv, wrapper


@dataclass(frozen=True)
class StartOptions:
    """What ``start`` is asked (``cli.start`` reads it, with its defaults; a resume too)."""

    name: str
    """The agent's name in the room, as typed."""
    cwd: str | None
    """Where it works (None: here)."""
    worktree: str | None
    """``--worktree``: None without it, else the branch (empty: the agent's name)."""
    agent: str
    """One of ``AGENT_KINDS``."""
    agent_kind: str | None
    """The kind the room records (None: ``agent``)."""
    detach: bool
    """Neither attach nor open a window inside tmux."""
    no_watch: bool
    """Start no background deliverer."""
    agent_args: Sequence[str]
    """The words after ``--``: the agent's own arguments."""


def cmd_start(asked: StartOptions) -> int:
    """Start the agent in tmux session ``ac-NAME`` (or a window NAME when inside tmux)."""
    environ = dict(os.environ)
    stale = stopped_demo(environ)
    if stale is not None:  # else the user's first room would be made in the demo's folder
        raise Refused(
            f"this shell still points agent-room at the demo room in {stale}, which has"
            f" stopped: run `{forget_hint()}` to start agents in your own room"
        )
    settings = RoomSettings.load(environ)  # a bad setting: one line, nothing started
    name = parse_name(asked.name)
    cwd = Path(asked.cwd or Path.cwd()).expanduser().absolute()
    if not cwd.is_dir():
        raise BadInput(f"--cwd {asked.cwd}: no such directory")
    label = asked.agent_kind or asked.agent
    if not is_valid_name(label):
        raise BadInput(f"invalid --agent-kind {label!r}: use a-z, 0-9, '-' and '_'")
    argv = agent_argv(asked.agent, list(asked.agent_args), settings)
    if asked.agent == "claude" and not {"-n", "--name"} & {a.split("=")[0] for a in argv}:
        argv = [argv[0], "--name", name, *argv[1:]]  # its peers' ListAgents and SendMessage
    env = agent_env(name, label, environ)
    ensure_room_dir(env["AGENT_ROOM_HOME"])  # the first start of a room makes it
    tmux = _Tmux(environ, settings.tmux)
    _refuse_if_running(tmux, name)
    cwd = _worktree(asked.worktree, name, cwd)
    argv, wrapper = _client_setup(asked.agent, name, cwd, argv, env, environ)
    opted_out = asked.no_watch or not settings.watch
    ensure_deliverer(os.environ, opted_out=opted_out)  # it serves the room's tools too
    if asked.agent != "command" and settings.mcp:
        await_serving(env["AGENT_ROOM_HOME"])

    hidden = [var for var in (*LEAKED, *ci_markers(asked.agent, environ)) if var not in env]
    # the shell's whole environment reaches the agent, through a private file (pane_exec)
    shell = {k: v for k, v in environ.items() if k not in hidden and k not in PANE_OWN}
    env_file = write_env_file(env["AGENT_ROOM_HOME"], name, {**shell, **env})
    command = pane_command(env_file, hidden, [*wrapper, *argv])
    try:
        pane_id = _open_pane(asked, tmux, environ, name, label, cwd, command)
    except RoomError:
        Path(env_file).unlink(missing_ok=True)  # no pane came to read it
        raise
    if pane_id is None:  # a window in the tmux we run in: nothing to attach
        return 0
    session = f"ac-{name}"
    attach = not asked.detach and sys.stdin.isatty() and sys.stdout.isatty()
    hint = "" if attach else f"; attach: {tmux.attach_hint(session)}"
    shown = printable(f"{session} ({pane_id}, {cwd}){hint}")
    _started(asked, f"@{name} started in tmux session {shown}", label, pane_id, tmux)
    if asked.agent == "claude" and not attach and trusted(environ, cwd) is False:
        print(
            printable(
                f"@{name} waits at Claude Code's question whether you trust {cwd}, and joins"
                f" the room once you answer it: {tmux.attach_hint(session)}"
            ),
            file=sys.stderr,
        )
    if attach:
        sys.stderr.flush()
        time.sleep(ATTACH_PAUSE)  # the lines above reach the terminal before tmux takes it
        os.execv(tmux.argv[0], [*tmux.argv, "attach-session", "-t", f"={session}"])  # noqa: S606
    return 0


def _open_pane(
    asked: StartOptions,
    tmux: _Tmux,
    environ: dict[str, str],
    name: str,
    label: str,
    cwd: Path,
    command: list[str],
) -> str | None:
    """Open the agent's pane: a window of the tmux we run in (None), else session ac-NAME
    (its pane id)."""
    options = ["-c", str(cwd), "-P", "-F", "#{pane_id} #{window_id}"]
    target = None if asked.detach else _window_target(tmux, environ)
    if target is not None:
        out = tmux("new-window", *target, "-n", name, *options, "--", *command)
        if not out:
            raise Refused(f"tmux did not open a window for @{name}: {tmux.said or 'no pane'}")
        pane_id, _, window = out[0].partition(" ")
        tmux("set-option", "-w", "-t", window, TAG, name)
        shown = printable(f"{name} ({pane_id}, {cwd})")
        _started(asked, f"@{name} started in tmux window {shown}", label, pane_id, tmux)
        return None
    try:
        return tmux.new_session(f"ac-{name}", options, command)
    except Refused as exc:
        if "duplicate session" in str(exc):  # another start won the race
            _refuse_if_running(tmux, name)
        raise


def _started(asked: StartOptions, said: str, label: str, pane_id: str, tmux: _Tmux) -> None:
    """Say the agent started (its deliverer was made sure of before it started).

    An ``--agent command`` agent is joined by its pane: it has no hooks that would
    register it, so ``who`` would otherwise never list the agent just started. A Codex
    agent is too, until its first prompt (Codex's hooks hear of the session only then,
    and it takes the name over): messages to it wait in the room meanwhile, never typed
    into its pane before it is registered."""
    if asked.agent in {"command", "codex"}:
        found = tmux("display-message", "-p", "-t", pane_id, "#{pane_pid}", check=False)
        pid = int(found[0]) if found and found[0].isdigit() else None
        stat = procfs.read_stat(pid) if pid else None
        room = Room.open(os.environ)
        try:
            room.join(
                asked.name,
                pane=pane_id,
                agent=label,
                tmux_socket=tmux.socket,
                pid=pid if stat else None,
                pid_start=stat.start_ticks if stat else None,
            )
        finally:
            room.close()
        said += (
            "; joined the room by its pane (a command has no hooks to register itself)"
            if asked.agent == "command"
            else "; joined the room by its pane until its first prompt registers it"
        )
    print(said, file=sys.stderr)


def _registered(room: Room | None, name: str, pane_pids: set[int]) -> list[Process]:
    """The registered agent as (pid, start), if it is alive in one of these panes."""
    try:
        row = room.store.holder(name) if room else None
    except RoomError:
        return []
    if row is None or not row["pid"] or not procfs.is_alive(row["pid"], row["pid_start"]):
        return []
    pid = int(row["pid"])
    if pid in pane_pids or pane_pids & {s.pid for s in procfs.ancestors(pid)}:
        return [(pid, row["pid_start"])]
    return []


def _open_room() -> Room | None:
    """The room, if there is one to ask: stopping must work without it."""
    try:
        return Room.open(os.environ) if Path(room_home(os.environ)).is_dir() else None
    except RoomError:
        return None


def _terminate(pid: int) -> None:
    """SIGTERM to the agent's process group (its tools too) if it leads one, else to it."""
    try:
        (os.killpg if os.getpgid(pid) == pid else os.kill)(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise Refused(f"not allowed to signal process {pid}") from None


def cmd_stop(*, name: str, remove_worktree: bool, force: bool) -> int:
    """End the agent started for NAME: SIGTERM, up to 5 s to exit, then close its tmux."""
    settings = RoomSettings.load(os.environ)
    name = parse_name(name)
    if remove_worktree or force:  # refused before anything is stopped
        worktrees.check_force(force=force, remove_worktree=remove_worktree)
        worktrees.check_removal(name, force=force)
    tmux = _Tmux(dict(os.environ), settings.tmux)
    session = f"ac-{name}"
    if tmux.has_session(session):
        target, kill, what = ["-s", "-t", f"={session}"], "kill-session", f"tmux session {session}"
    else:
        window = tmux.tagged_window(name)
        if window is None and remove_worktree:  # not running: only the worktree to remove
            print(f"@{name}: {worktrees.remove_worktree(name, force=force)}", file=sys.stderr)
            return 0
        if window is None:
            raise NotFound(f"@{name} is not running in tmux (no session {session}, no window)")
        target, kill, what = ["-t", window], "kill-window", f"tmux window {window}"
    pane_pids = {int(p) for p in tmux("list-panes", *target, "-F", "#{pane_pid}") if p.isdigit()}
    room = _open_room()
    # not registered (yet)? The panes' processes are the agents we launched
    victims = _registered(room, name, pane_pids) or [
        (pid, getattr(procfs.read_stat(pid), "start_ticks", None)) for pid in pane_pids
    ]
    for pid, _ in victims:
        _terminate(pid)
    probe = SystemProbe()
    deadline = time.monotonic() + STOP_GRACE
    while any(probe.is_alive(*v) for v in victims) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [pid for pid, start in victims if probe.is_alive(pid, start)]
    tmux(kill, "-t", target[-1], check=False)  # gone already if the agent's exit closed it
    if room:
        with contextlib.suppress(RoomError):  # the room shows it ended now, not at next `who`
            Registry(room, probe).refresh()
        room.close()
    late = f" (pid {survivors[0]} outlived SIGTERM by {STOP_GRACE:g} s)" if survivors else ""
    print(f"@{name} stopped; closed {what}{late}", file=sys.stderr)
    if remove_worktree:
        print(f"@{name}: {worktrees.remove_worktree(name, force=force)}", file=sys.stderr)
    return 0
