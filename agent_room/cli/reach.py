"""``agent-room popup``, ``agent-room tmux install-keys|remove-keys|keys`` and
``agent-room notify``: the console and the room's news where the operator already is."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import click

from agent_room.adapters.git import GitCli
from agent_room.adapters.reach import open_popup
from agent_room.adapters.tmux import user_client
from agent_room.cli.output import print_json
from agent_room.cli.params import Group, json_option
from agent_room.core.attention import Alert, alerts
from agent_room.core.overlaps import overlap_facts
from agent_room.room.code import CodeTracker
from agent_room.room.service import Room
from agent_room.store.attention import facts
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.files import SETTINGS_LIMIT, read_regular
from agent_room.turn.core.names import tmux_socket_of
from agent_room.turn.core.printable import printable
from agent_room.ui.settings import ConsoleSettings
from agent_room.workers.notifier import build_channels

BEGIN = "# >>> agent-room >>> (added by `agent-room tmux install-keys`; `remove-keys` takes it out)"
END = "# <<< agent-room <<<"
PASSED_ON = ("AGENT_ROOM_HOME", "XDG_CONFIG_HOME", "AGENT_ROOM_THEME", "PYTHONPATH")
"""What the popup's console takes from the caller's environment: the same room, the
same settings (a tmux server's own environment may be older than the caller's)."""


def console_command(environ: Mapping[str, str], *args: str) -> list[str]:
    """The console as a command line of its own, on the caller's room."""
    env = [f"{k}={environ[k]}" for k in PASSED_ON if environ.get(k)]
    return [*(["env", *env] if env else []), sys.executable, "-m", "agent_room", "console", *args]


def _size(text: str) -> str:
    number = text.removesuffix("%")
    if not number.isdigit() or not 10 <= int(number) <= 100:
        raise BadInput(f"invalid popup size {text!r}: use a percentage from 10% to 100%")
    return f"{int(number)}%"


def cmd_popup(*, until_clear: bool, size: str) -> int:
    """Open the console in a tmux popup over the current window; return when it closes."""
    percent = _size(size)
    if not os.environ.get("TMUX"):
        raise BadInput("agent-room popup opens over a tmux window: run it inside tmux")
    extra = ["--until-clear"] if until_clear else []
    command = console_command(os.environ, *extra)
    socket = tmux_socket_of(os.environ["TMUX"])
    client = user_client(socket, os.environ.get("TMUX_PANE"))  # never a kept client
    return open_popup(socket, command, size=percent, cwd=str(Path.cwd()), client=client)


# -- tmux.conf ---------------------------------------------------------------------------


def tmux_lines(key: str, environ: Mapping[str, str]) -> list[str]:
    """The lines for tmux.conf: the status line, and a key that opens the popup."""
    if not key or any(c.isspace() or c in "'\"\\;#" for c in key):
        raise BadInput(f"invalid key {key!r}: use a tmux key name such as A or C-a")
    status = shlex.join([*_agent_room(environ), "status"])
    popup = shlex.join([*console_command(environ)])
    return [
        f"set -ag status-right ' #({status})'",
        f"bind-key {key} display-popup -E -w 90% -h 90% -T ' agent-room ' {shlex.quote(popup)}",
    ]


def _agent_room(environ: Mapping[str, str]) -> list[str]:
    env = [f"{k}={environ[k]}" for k in PASSED_ON if environ.get(k)]
    return [*(["env", *env] if env else []), sys.executable, "-m", "agent_room"]


def tmux_conf(environ: Mapping[str, str]) -> Path:
    """The user's tmux.conf: ``~/.tmux.conf``, or the XDG one where only that exists."""
    home = Path("~").expanduser()
    classic = home / ".tmux.conf"
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "tmux" / "tmux.conf"
    return xdg if not classic.exists() and xdg.exists() else classic


def without_block(text: str) -> tuple[str, bool]:
    """``text`` with agent-room's block taken out; whether there was one."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    inside = found = False
    for line in lines:
        if line.rstrip("\n") == BEGIN:
            inside = found = True
        elif inside and line.rstrip("\n") == END:
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise BadInput("the agent-room block in your tmux.conf has no end line: fix it by hand")
    return "".join(kept), found


def _write(path: Path, text: str) -> None:
    """Replace ``path`` whole (a temporary file renamed over it), keeping its mode; an
    empty result removes a file that only held agent-room's lines."""
    if not text:
        path.unlink(missing_ok=True)
        return
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.agent-room-{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    temp.replace(path)


def cmd_tmux_keys(*, action: str, key: str, file: str | None) -> int:
    """Print, add or take out agent-room's lines in tmux.conf (between two markers)."""
    lines = tmux_lines(key, os.environ)
    if action == "keys":
        sys.stdout.write("\n".join(lines) + "\n")
        return 0
    path = Path(file) if file else tmux_conf(os.environ)
    try:
        text = read_regular(path, SETTINGS_LIMIT).decode("utf-8")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BadInput(f"cannot read {path}: {exc}") from None
    rest, found = without_block(text)
    if action == "remove-keys":
        if not found:
            sys.stderr.write(f"{path} has no agent-room lines: nothing to take out\n")
            return 0
        _write(path, rest)
        sys.stderr.write(
            f"took agent-room's lines out of {path}; in a running tmux: tmux unbind-key {key}"
            " and tmux source-file to reload\n"
        )
        return 0
    if rest and not rest.endswith("\n"):
        rest += "\n"
    _write(path, rest + "\n".join([BEGIN, *lines, END]) + "\n")
    sys.stderr.write(
        f"{'updated' if found else 'added'} agent-room's lines in {path}"
        f" (prefix {key}: the console in a popup; the status line at the right);"
        f" reload: tmux source-file {shlex.quote(str(path))}\n"
    )
    return 0


# -- notify ------------------------------------------------------------------------------


def cmd_notify(*, test: bool, as_json: bool) -> int:
    """What needs the operator now, and whether each configured channel can speak."""
    settings = ConsoleSettings.load(os.environ).notify
    room = Room.open(os.environ)
    try:
        now = time.time()
        overlaps = CodeTracker(room, GitCli()).refresh(previews=False).overlaps
        known = replace(
            facts(room.store.conn, now), code=overlap_facts(overlaps)
        )  # who touches what
        found = alerts(known, now=now, permission_after=0.0)
        channels, problems = build_channels(settings, room, tmux_socket_of(os.environ.get("TMUX")))
        if test:
            trial = Alert("test", "test", "operator", "a test notification from agent-room notify")
            for channel in channels:
                channel.send([trial])
    finally:
        room.close()
    if as_json:
        print_json(
            {
                "alerts": [
                    {"key": a.key, "kind": a.kind, "agent": a.agent, "text": a.text} for a in found
                ],
                "channels": [c.name for c in channels],
                "problems": problems,
            }
        )
        return 0
    for alert in found:
        sys.stdout.write(printable(alert.text) + "\n")
    if not found:
        sys.stdout.write("nothing needs you\n")
    sys.stderr.write(f"channels: {', '.join(c.name for c in channels) or 'none'}\n")
    for problem in problems:
        sys.stderr.write(problem + "\n")
    return 0


# The commands: popup, tmux install-keys|remove-keys|keys, notify (loaded by cli.app when they run).


@click.command("popup")
@click.option(
    "--until-clear",
    is_flag=True,
    help="close the popup once the last pending handover is decided",
)
@click.option("--size", default="90%", metavar="PERCENT", help="width and height (90%)")
def popup_command(until_clear: bool, size: str) -> int:
    return cmd_popup(until_clear=until_clear, size=size)


@click.group("tmux", cls=Group)
def tmux_command() -> None:
    """Tmux key bindings and the status line for agent-room."""


def _tmux_action(action: str, text: str) -> None:
    """``tmux ACTION``: the three differ only in what they do with the lines."""

    @tmux_command.command(action, help=text[0].upper() + text[1:] + ".")
    @click.option("--key", default="A", help="the key after the prefix (default: A)")
    @click.option("--file", metavar="PATH", help="the tmux.conf (default: yours)")
    def command(key: str, file: str | None) -> int:
        return cmd_tmux_keys(action=action, key=key, file=file)


_tmux_action("install-keys", "add the popup key and the status line to your tmux.conf")
_tmux_action("remove-keys", "take them out again")
_tmux_action("keys", "print the lines, change nothing")


@click.command("notify")
@click.option("--test", is_flag=True, help="send one test notification")
@json_option
def notify_command(test: bool, as_json: bool) -> int:
    return cmd_notify(test=test, as_json=as_json)
