"""Setting up and tearing down a demo room: its own tmux server, room and agents.

Everything lives in one private temporary directory (``mkdtemp``: 0700, a fresh name,
never a fixed path in /tmp): the room (``room/``), the tmux server's socket (``t``), the
agents' working folders (``work/NAME``) and, for real clients, their HOME. The tmux
server holds session ``demo`` with the console, the delivery worker and the director,
and one session ``ac-NAME`` per agent, started by ``agent-room start`` as a user would.
``demo.json`` marks the folder as a demo, so ``agent-room demo --stop`` finds every demo
of this user by looking for marked folders it owns, and removes nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from agent_room.adapters.install import agent_room_command
from agent_room.demo import others
from agent_room.demo.conversation import AGENTS
from agent_room.demo.folder import PREFIX
from agent_room.room.service import Room
from agent_room.turn.core.errors import NotFound, Refused

MARK = "demo.json"
SESSION = "demo"
API_KEY = "sk-ant-api03-agent-room-demo-0123456789abcdefghij"
"""Any key does for the stand-in; the client is told it was approved."""
DIALOG_SECONDS = 90.0
"""How long a simulated agent's permission dialog stays open unless answered in its pane."""
STOP_GRACE = 10.0
"""Seconds the agents get to exit when the demo stops."""
SERVER_GRACE = 2.0
"""Seconds the tmux server gets to exit once told to, before what holds it is ended."""
CLIENT_TIMEOUT = 60.0
"""Seconds the model stand-in may take to come up."""
LEAKED: tuple[str, ...] = ("TMUX", "TMUX_PANE", "AGENT_ROOM_NAME", "AGENT_ROOM_PARENT")
LEAKED += ("CLAUDECODE", "CLAUDE_PID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT")
LEAKED += ("CLAUDE_CODE_MESSAGING_SOCKET",)
"""Variables of whoever starts the demo that would misidentify its agents."""


class Demo(NamedTuple):
    """One demo room on disk."""

    root: Path

    @property
    def home(self) -> Path:
        """The room (``$AGENT_ROOM_HOME``)."""
        return self.root / "room"

    @property
    def socket(self) -> Path:
        """The tmux server's socket (``$AGENT_ROOM_TMUX``)."""
        return self.root / "t"

    def attach_argv(self) -> list[str]:
        """The command that attaches a terminal to the demo's console."""
        return [_tmux(), "-S", str(self.socket), "attach-session", "-t", f"={SESSION}"]

    def exports(self) -> str:
        """Shell lines that point ``agent-room`` at this room."""
        return f"export AGENT_ROOM_HOME={self.home}\nexport AGENT_ROOM_TMUX={self.socket}\n"


def _tmux() -> str:
    found = shutil.which("tmux")
    if found is None:
        raise NotFound("tmux is not installed: the demo runs its agents in tmux (apt install tmux)")
    return found


CONSOLE_CLOSED = (
    "The console is closed; the demo room goes on.\n"
    "  Enter: open the console again\n"
    "  C-b d: detach (come back: agent-room demo --list)\n"
    "  agent-room demo --stop: end the demo and remove its folder"
)
"""What the demo's console window says once the console quits."""

PINNED_CLAUDE = Path(".tools", "claude-code", "node_modules", ".bin", "claude")
"""Where a checkout's ``.ci/setup`` installs the pinned client, relative to the checkout."""


def claude_binary(environ: Mapping[str, str]) -> str:
    """The Claude Code to run: $AGENT_ROOM_CLAUDE, else ``claude`` on PATH, else the client
    a checkout's ``.ci/setup`` pinned into ``.tools/`` (so the demo works right after it)."""
    pinned = Path(__file__).resolve().parents[2] / PINNED_CLAUDE
    given = (
        environ.get("AGENT_ROOM_CLAUDE")
        or shutil.which("claude", path=environ.get("PATH"))
        or (str(pinned) if pinned.is_file() else None)
    )
    if not given or not os.access(given, os.X_OK):
        raise NotFound(
            "Claude Code not found: install it (npm install -g @anthropic-ai/claude-code),"
            " run .ci/setup in a checkout, or set AGENT_ROOM_CLAUDE (demo --claude)"
        )
    return str(Path(given).absolute())


def _write_claude_json(home: Path, folders: list[Path]) -> None:
    """Onboarding done, the key approved, the folders trusted (DESIGN.md section 6)."""
    home.mkdir(mode=0o700)
    config = {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(f): {"hasTrustDialogAccepted": True} for f in folders},
        "fullscreenUpsellSeenCount": 99,
        "hasSeenAutoDefaultNotice": True,
    }
    (home / ".claude.json").write_text(json.dumps(config))


class _Setup:
    """The steps of one demo's start, with the environment they share."""

    def __init__(
        self, demo: Demo, environ: Mapping[str, str], claude: bool, clients: Sequence[str] = ()
    ) -> None:
        self.demo = demo
        self.claude = claude
        self.clients = clients
        self.tmux = [_tmux(), "-S", str(demo.socket)]
        path = os.pathsep.join([str(Path(sys.executable).parent), environ.get("PATH", "")])
        self.env = {k: v for k, v in environ.items() if k not in LEAKED}
        self.env.update(
            PATH=path,
            AGENT_ROOM_HOME=str(demo.home),
            AGENT_ROOM_TMUX=str(demo.socket),
            AGENT_ROOM_WATCH="off",  # the demo runs its own watch, inside its tmux server
        )
        if claude:
            self.env["AGENT_ROOM_CLAUDE"] = claude_binary(environ)
            (demo.root / "tmp").mkdir(mode=0o700)
            self.env.update(
                HOME=str(demo.root / "home"),
                TMPDIR=str(demo.root / "tmp"),  # the clients' sockets and notes go with the demo
                ANTHROPIC_API_KEY=API_KEY,
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            )
            for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"):
                self.env.pop(var, None)
        if clients:  # a HOME of the demo's own: the user's Codex and Gemini stay untouched
            self.env.update(HOME=str(demo.root / "home"), **others.client_env(clients, environ))
            for var in ("CODEX_HOME", "GEMINI_CLI_HOME", "GOOGLE_GEMINI_BASE_URL"):
                self.env.pop(var, None)

    def run(self, *argv: str) -> None:
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, check=False)
        if proc.returncode:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise Refused(f"demo setup failed at {Path(argv[0]).name} {argv[1]}: {detail[-1:]}")

    def server(self) -> None:
        """The tmux server with the console. Quitting the console (``q``) leaves the demo
        running: the window says so, how to open the console again (Enter), how to leave
        (detach) and how to end the demo, instead of showing a dead, blank pane."""
        loop = (
            'hint=$1; shift; while :; do "$@"; printf "\\n%s\\n" "$hint"; '
            + "read -r _ || exit; done"
        )
        again = ["sh", "-c", loop, "sh", CONSOLE_CLOSED, *agent_room_command()]
        self.run(
            *self.tmux,
            "new-session", "-d", "-s", SESSION, "-n", "console", "-x", "160", "-y", "48",
            "-c", str(self.demo.root), "--", *again,
            ";", "set-option", "-w", "-t", f"={SESSION}:console", "remain-on-exit", "on",
        )  # fmt: skip

    def window(self, name: str, *command: str) -> None:
        self.run(
            *self.tmux, "new-window", "-d", "-t", f"={SESSION}:", "-n", name,
            "-c", str(self.demo.root), "--", *command,
        )  # fmt: skip

    def model_url(self, name: str = "model-url", variable: str = "ANTHROPIC_BASE_URL") -> str:
        """Wait for the director's model stand-in and hand its URL to the clients."""
        url_file = self.demo.root / name
        deadline = time.monotonic() + CLIENT_TIMEOUT
        while not url_file.exists():
            if time.monotonic() > deadline:
                raise Refused("the demo's model stand-in did not start")
            time.sleep(0.05)
        url = url_file.read_text().strip()
        self.run(*self.tmux, "set-environment", "-g", variable, url)
        return url

    def other_agents(self) -> None:
        """Codex and Gemini agents against the director's stand-in, each greeted once."""
        url = self.model_url("client-url", "GOOGLE_GEMINI_BASE_URL")
        others.write_home(self.demo.root / "home", url)
        for kind in self.clients:
            name = others.agent_name(kind)
            work = self.demo.root / "work" / name
            work.mkdir(parents=True, exist_ok=True)
            start = [*agent_room_command(), "start", name, "--agent", kind, "--cwd", str(work)]
            self.run(*start, "--detach")
        for kind in self.clients:
            others.greet(self.tmux, others.agent_name(kind), kind)

    def agent(self, name: str) -> None:
        work = self.demo.root / "work" / name
        start = [*agent_room_command(), "start", name, "--cwd", str(work), "--detach"]
        if not self.claude:
            simulator = [sys.executable, "-m", "agent_room.demo.simulator"]
            simulator += ["--answer-after", f"{DIALOG_SECONDS:g}"]
            simulator += ["--transcripts", str(self.demo.root / "transcripts")]
            start += ["--agent", "command", "--agent-kind", "simulated", "--", *simulator]
        elif name == "mobile":  # manual mode: its command outside the allowed tools asks first
            start += ["--", "--permission-mode", "default"]
        self.run(*start)


def start(environ: Mapping[str, str], *, claude: bool = False, clients: Sequence[str] = ()) -> Demo:
    """Create a demo room and start it running: console, worker, director, four agents
    (and a Codex and a Gemini agent for ``clients``)."""
    demo = Demo(Path(tempfile.mkdtemp(prefix=PREFIX)))
    try:
        folders = [demo.root / "work" / name for name in AGENTS]
        for folder in folders:
            folder.mkdir(parents=True)
        mark = {"claude": claude, "clients": list(clients), "pid": os.getpid()}
        (demo.root / MARK).write_text(json.dumps(mark))
        if claude:
            _write_claude_json(demo.root / "home", folders)
        setup = _Setup(demo, environ, claude, clients)
        Room.open({"AGENT_ROOM_HOME": str(demo.home)}).close()  # schema first, then writers
        setup.server()
        setup.window("watch", *agent_room_command(), "watch")
        director = [sys.executable, "-m", "agent_room.demo.director"]
        if claude:
            director += ["--claude", "--url-file", str(demo.root / "model-url")]
        if clients:
            director += ["--clients", ",".join(clients)]
            director += ["--client-url-file", str(demo.root / "client-url")]
        setup.window("director", *director)
        if claude:
            setup.model_url()
        for name in AGENTS:
            setup.agent(name)
        if clients:
            setup.other_agents()
    except BaseException:
        stop(demo)
        raise
    return demo


def _owned_demo(path: Path) -> bool:
    """A folder this user made for a demo: a real directory, ours, private, marked."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & 0o077
        and (path / MARK).is_file()
    )


def running() -> Iterator[Demo]:
    """Every demo room of this user in the temporary directory."""
    base = Path(tempfile.gettempdir())
    for path in sorted(base.glob(f"{PREFIX}*")):
        if _owned_demo(path):
            yield Demo(path)


def named(where: str) -> Demo:
    """The demo room in folder ``where`` (its root, room or socket), refused unless it is
    one of this user's demo rooms: ``--stop`` removes the folder."""
    path = Path(where).expanduser().absolute()
    for candidate in (path, path.parent):
        if candidate.name.startswith(PREFIX) and _owned_demo(candidate):
            return Demo(candidate)
    raise NotFound(f"{where} is not a demo room of yours (see: agent-room demo --list)")


def current(environ: Mapping[str, str]) -> Demo | None:
    """The demo room this terminal uses: the one ``$AGENT_ROOM_HOME`` or
    ``$AGENT_ROOM_TMUX`` point at (``eval "$(agent-room demo --detach)"``), or whose tmux
    server this pane belongs to; ``None`` if it uses none."""
    tmux = environ.get("TMUX", "").split(",")[0]
    for value in (environ.get("AGENT_ROOM_HOME"), environ.get("AGENT_ROOM_TMUX"), tmux):
        if not value:
            continue
        with contextlib.suppress(NotFound):
            return named(value)
    return None


def _pane_pids(demo: Demo) -> list[int]:
    return _ask_tmux(demo, "list-panes", "-a", "-F", "#{pane_pid}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):  # a zombie has exited
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    return False


def stop(demo: Demo) -> None:
    """End the demo's tmux server and its agents, then remove its folder.

    The agents are waited for: a real client runs its SessionEnd hook on the way out,
    and that hook writes into the room.
    """
    pids: list[int] = []
    server: list[int] = []
    control: list[int] = []
    if demo.socket.exists():
        with contextlib.suppress(NotFound):
            pids = _pane_pids(demo)
            server = _ask_tmux(demo, "display-message", "-p", "#{pid}")
            control = _ask_tmux(
                demo, "list-clients", "-F", "#{?client_control_mode,#{client_pid},}"
            )
            subprocess.run(
                [_tmux(), "-S", str(demo.socket), "kill-server"], capture_output=True, check=False
            )
    deadline = time.monotonic() + STOP_GRACE
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    _end(pid for pid in pids if _alive(pid))
    _end_server(server, control)
    shutil.rmtree(demo.root, ignore_errors=True)


def _end_server(server: list[int], control: list[int]) -> None:
    """Make sure the tmux server has gone. It waits for its clients to leave before it
    exits, and a control-mode client whose reader died with output queued for it (the
    deliverer's kept client, when the hang-up ends the deliverer first) never leaves:
    such a client is ended by its pid, then the server if it still lingers."""
    deadline = time.monotonic() + SERVER_GRACE
    while any(_alive(pid) for pid in server) and time.monotonic() < deadline:
        time.sleep(0.02)
    if not any(_alive(pid) for pid in server):
        return
    _end(pid for pid in control if _alive(pid))
    deadline = time.monotonic() + SERVER_GRACE
    while any(_alive(pid) for pid in server) and time.monotonic() < deadline:
        time.sleep(0.02)
    _end(pid for pid in server if _alive(pid))


def _ask_tmux(demo: Demo, *args: str) -> list[int]:
    """The pids a tmux command on the demo's server prints, one a line."""
    proc = subprocess.run(
        [_tmux(), "-S", str(demo.socket), *args], capture_output=True, text=True, check=False
    )
    return [int(p) for p in proc.stdout.split() if p.isdigit()] if proc.returncode == 0 else []


def _end(pids: Iterable[int]) -> None:
    """Kill what outlived the hang-up (Gemini CLI does), with all it started: each pane's
    process leads its own group. Killed, not asked, so no hook of it writes into a room
    that is being removed."""
    ended = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            ended.append(pid)
    deadline = time.monotonic() + 2.0
    while any(_alive(pid) for pid in ended) and time.monotonic() < deadline:
        time.sleep(0.02)
