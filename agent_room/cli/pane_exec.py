"""The first process of an agent's pane: take the environment ``start`` saved, become the agent.

A tmux server that already runs gives a new session its own global environment, not the
environment of the shell that ran ``start``: a key exported there (``OPENAI_API_KEY``,
``GEMINI_API_KEY`` ...) would be missing in the agent. tmux's ``-e`` would carry it, but on
tmux's command line, where every user of the machine can read it. So ``start`` writes the
environment to a private file in the room (0600, in the 0700 room), and the pane's first
command is this module: it reads the file, removes it, and ``exec``s the agent with that
environment laid over the one tmux gave the pane (so ``tmux set-environment -g`` still
reaches agents), and the pane's process is still the agent's (the room tells panes by their
pid). tmux's own variables (``TMUX``, ``TMUX_PANE``, the terminal's) are the pane's.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agent_room.turn.store.home import open_private

PANE_OWN = ("TMUX", "TMUX_PANE", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "COLORTERM")
"""Variables that describe the pane the agent runs in: tmux's values win over the shell's."""

SUFFIX = ".env"


def write_env_file(home: str, name: str, env: dict[str, str]) -> str:
    """Save ``env`` for the pane of ``name``; return the file (removed by :func:`main`)."""
    path = Path(home, f"start-{name}-{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}")
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, json.dumps(env).encode())
    finally:
        os.close(fd)
    return str(path)


def pane_command(env_file: str, hidden: list[str], argv: list[str]) -> list[str]:
    """The pane's initial command: this module, the file, the variables to drop, the agent."""
    drop = [f"-u{var}" for var in hidden]
    return [sys.executable, "-m", "agent_room.cli.pane_exec", env_file, *drop, "--", *argv]


def main(args: list[str]) -> int:
    """Read and remove the saved environment, then ``exec`` the agent in this process."""
    env_file, rest = args[0], args[1:]
    at = rest.index("--")
    drop = {item[2:] for item in rest[:at]}
    argv = rest[at + 1 :]
    try:
        fd = os.open(env_file, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                raise PermissionError(f"{env_file} is not yours")
            saved = json.loads(os.read(fd, 1 << 22).decode())
        finally:
            os.close(fd)
            Path(env_file).unlink()
    except (OSError, ValueError) as exc:
        print(f"agent-room: cannot read the environment start saved: {exc}", file=sys.stderr)
        return 1
    # tmux's environment for the pane, then the shell's over it: what the user set with
    # tmux set-environment still arrives, what they exported where they ran start wins
    env = {**os.environ, **{str(k): str(v) for k, v in saved.items()}}
    env.update({k: os.environ[k] for k in PANE_OWN if k in os.environ})
    for var in drop:
        env.pop(var, None)
    try:
        os.execvpe(argv[0], argv, env)  # noqa: S606
    except OSError as exc:
        print(f"agent-room: cannot run {argv[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
