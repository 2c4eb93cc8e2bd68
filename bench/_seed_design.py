"""Seed 004's delivery design, written out as its bash scripts, for the delivery
benchmark to run side by side with agent-room's."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from _common import (
    wait_until,
)
from _tmux_observer import Control, TmuxServer, perf

SENDER = "backend"
RECIPIENT = "frontend"

SEED_NUDGE = re.compile(
    rb"New message from @backend\. Check inbox\. \((\d{8}T\d{15}-from-backend\.md)\)"
)

SEND_SH = r"""#!/usr/bin/env bash
# Seed 004's send.sh <@recipient> "<message>", as its section 5 specifies it (Linux).
set -euo pipefail
DIR="${AGENT_CHAT_DIR:-$HOME/agent-chat}"
SENDER="${AGENT_CHAT_NAME:?set AGENT_CHAT_NAME}"
RECIPIENT="${1#@}"
MESSAGE="$2"
if ! grep -q "\"name\": \"${RECIPIENT}\"" "$DIR/sessions.json"; then
  echo "send.sh: @${RECIPIENT} is not in the chat" >&2
  exit 1
fi
read -r STAMP ISO <<<"$(date -u '+%Y%m%dT%H%M%S%N %Y-%m-%dT%H:%M:%S.%3NZ')"
FILE="$DIR/inbox/$RECIPIENT/${STAMP}-from-${SENDER}.md"
printf 'from: %s\nto: %s\ntimestamp: %s\n---\n%s\n' \
  "$SENDER" "$RECIPIENT" "$ISO" "$MESSAGE" >"$FILE"
printf '[%s] @%s -> @%s: %s\n' "$ISO" "$SENDER" "$RECIPIENT" "$MESSAGE" >>"$DIR/history.log"
echo "Message sent to @${RECIPIENT}: ${FILE##*/}"
"""

WATCHER_SH = r"""#!/usr/bin/env bash
# Seed 004's watcher.sh <name> <tmux-pane>, as its section 5 specifies it (the Linux
# branch), with one change: the nudge names the message file, so that the benchmark can
# tell the nudges apart (the seed's reads "New message from @SENDER. Check inbox.").
DIR="${AGENT_CHAT_DIR:-$HOME/agent-chat}"
NAME="$1"
PANE="$2"
INBOX="$DIR/inbox/$NAME"
mkdir -p "$INBOX"
inotifywait -m -e close_write,moved_to --format '%f' "$INBOX" | while read -r FILE; do
  case "$FILE" in *.md) ;; *) continue ;; esac
  sleep 0.2
  SENDER=$(sed -n 's/^from: //p' "$INBOX/$FILE" | head -n 1)
  tmux send-keys -t "$PANE" -l "New message from @${SENDER}. Check inbox. (${FILE})"
  sleep 0.1
  tmux send-keys -t "$PANE" Enter
done
"""


@dataclass
class SeedSample:
    """One seed-design message; every time in seconds from the spawn of ``send.sh``."""

    file: str
    visible: float
    send_exit: float
    confirm: float


@dataclass
class Seed:
    """The seed's side: its chat directory, scripts, the watcher and a pane running cat."""

    root: Path
    pane: str
    env: dict[str, str]
    watcher: subprocess.Popen[bytes]
    send_sh: Path
    counter: int = 0
    seen: set[str] = field(default_factory=set)


def seed_message(ctl: Control, seed: Seed) -> SeedSample:
    """Send one message with the seed's ``send.sh``; time it to its nudge in the pane."""
    seed.counter += 1
    stream = ctl.clear(seed.pane)
    spawned = ctl.spawn(
        [str(seed.send_sh), f"@{RECIPIENT}", f"bench message {seed.counter}"], seed.env
    )
    match = ctl.wait(
        lambda: SEED_NUDGE.search(stream.data, stream.mark), timeout=20, what="the seed's nudge"
    )
    visible = stream.last_at - spawned.started
    send_exit = ctl.wait_exit(spawned)
    name = spawned.out.decode().split()[-1]
    if match[1].decode() != name or name in seed.seen:
        raise RuntimeError(f"seed nudge for {match[1]!r} while {name} was written")
    seed.seen.add(name)
    if not (seed.root / "inbox" / RECIPIENT / name).is_file():
        raise RuntimeError(f"seed message {name} is not in the inbox")
    text = match[0]
    if text not in ctl.screen(seed.pane):
        raise RuntimeError(f"{text!r} came as output but is not on the pane's screen")
    confirm = perf() - spawned.started - visible
    # Enter pressed: cat prints the line back (the terminal echoed it once already)
    ctl.wait(lambda: stream.new().count(text) >= 2, timeout=10, what="the seed's Enter")
    ctl.wait_quiet(seed.pane)
    return SeedSample(file=name, visible=visible, send_exit=send_exit, confirm=confirm)


def setup_seed(
    scratch: Path, server: TmuxServer, base_env: dict[str, str], stack: ExitStack
) -> Seed:
    """The seed's chat directory and scripts, a pane running cat, and its watcher."""
    if shutil.which("inotifywait") is None:
        raise SystemExit(
            "inotifywait not found: install inotify-tools (apt-get install inotify-tools)"
        )
    root = scratch / "seed" / "agent-chat"
    scripts = scratch / "seed" / "scripts"
    (root / "inbox" / RECIPIENT).mkdir(parents=True)
    scripts.mkdir(parents=True)
    pane = server.new_window("seed", "cat")
    joined = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    sessions = [
        {"name": name, "pane": p, "joined_at": joined}
        for name, p in ((RECIPIENT, pane), (SENDER, "%999"))
    ]
    (root / "sessions.json").write_text(json.dumps(sessions, indent=2) + "\n")
    (root / "history.log").touch()
    send_sh = scripts / "send.sh"
    watcher_sh = scripts / "watcher.sh"
    for path, text in ((send_sh, SEND_SH), (watcher_sh, WATCHER_SH)):
        path.write_text(text)
        path.chmod(0o755)
    env = {**base_env, "AGENT_CHAT_DIR": str(root), "AGENT_CHAT_NAME": SENDER}
    # the watcher runs outside tmux: $TMUX names the private server, so its
    # ``tmux send-keys -t "$PANE"`` lines stay as the seed wrote them
    watcher_env = {**env, "TMUX": f"{server.socket_path},0,0"}
    log = scratch / "seed" / "watcher.log"
    with log.open("wb") as err:
        watcher = subprocess.Popen(
            [str(watcher_sh), RECIPIENT, pane],
            env=watcher_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # its own process group: bash, inotifywait, the loop
        )
    stack.callback(stop_seed_watcher, watcher)
    wait_until(
        lambda: b"Watches established" in log.read_bytes(),
        timeout=10,
        what="inotifywait's watches",
    )
    return Seed(root=root, pane=pane, env=env, watcher=watcher, send_sh=send_sh)


def stop_seed_watcher(proc: subprocess.Popen[bytes]) -> None:
    """End the seed's watcher: its ``inotifywait`` first (by pid), so that the script
    reaps its pipeline and exits; then, if anything is left, the process group this
    benchmark started it in (its pid is the group id)."""
    with suppress(psutil.Error):
        for child in psutil.Process(proc.pid).children(recursive=True):
            if child.name() == "inotifywait":
                child.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    with suppress(ProcessLookupError):  # a straggler of the group, if any
        os.killpg(proc.pid, signal.SIGKILL)
