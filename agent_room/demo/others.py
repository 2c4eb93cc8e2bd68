"""Codex CLI and Gemini CLI in the demo room (``agent-room demo --codex --gemini``).

Each client joins the demo as one more agent (``@reviewer`` runs Codex, ``@docs`` runs
Gemini) started with ``agent-room start --agent codex|gemini`` like any user's, against
the loopback stand-in the director serves (``demo.client_api``), with a HOME of the
demo's own that holds only what a user of that stand-in would have configured (a model
provider for Codex, API-key auth for Gemini). Its first prompt is typed once its prompt
shows (Codex joins the room at its first prompt); then the director's pings reach it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_room.demo.conversation import OTHER_AGENTS
from agent_room.turn.core.clients import settle_for
from agent_room.turn.core.errors import NotFound, Refused

KEY = "agent-room-demo-key"
"""Any key does for the stand-in."""
READY = {"codex": "Ask Codex to do anything", "gemini": "Type your message"}
"""What each client's input line shows when it waits for a prompt."""
GREETING = "DEMO-HELLO: you are in the demo room"
STARTUP = 60.0
PINNED = {
    "codex": Path(".tools", "codex", "node_modules", ".bin", "codex"),
    "gemini": Path(".tools", "gemini-cli", "node_modules", ".bin", "gemini"),
}
"""The clients ``.ci/setup`` installs in a checkout."""


def client_binary(kind: str, environ: Mapping[str, str]) -> str:
    """``$AGENT_ROOM_CODEX`` / ``$AGENT_ROOM_GEMINI``, else the client on PATH, else the
    checkout's pinned copy."""
    checkout = Path(__file__).resolve().parents[2] / PINNED[kind]
    found = (
        environ.get(f"AGENT_ROOM_{kind.upper()}")
        or shutil.which(kind, path=environ.get("PATH"))
        or (str(checkout) if checkout.is_file() else None)
    )
    if not found:
        raise NotFound(
            f"{kind} not found: install it from npm, run .ci/setup in a checkout, or set"
            f" AGENT_ROOM_{kind.upper()} (demo --{kind})"
        )
    return found


def client_env(kinds: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """What the demo's tmux server passes to the clients (the stand-in's URL comes later)."""
    env = {"STANDIN_API_KEY": KEY, "GEMINI_API_KEY": KEY}
    for kind in kinds:
        env[f"AGENT_ROOM_{kind.upper()}"] = client_binary(kind, environ)
    return env


def write_home(home: Path, url: str) -> None:
    """A user's configuration for the stand-in: Codex's provider, Gemini's auth."""
    codex = home / ".codex"
    codex.mkdir(parents=True, exist_ok=True)
    (codex / "config.toml").write_text(
        'model = "stand-in-model"\nmodel_provider = "standin"\n\n[model_providers.standin]\n'
        f'name = "Demo stand-in"\nbase_url = "{url}/v1"\nenv_key = "STANDIN_API_KEY"\n'
        'wire_api = "responses"\n'
    )
    gemini = home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (gemini / "settings.json").write_text(json.dumps(auth))


def greet(tmux: Sequence[str], name: str, kind: str) -> None:
    """Type the agent's first prompt once its client shows its prompt."""
    target = f"=ac-{name}:"
    deadline = time.monotonic() + STARTUP
    while READY[kind] not in _screen(tmux, target):
        if time.monotonic() > deadline:
            raise Refused(f"@{name} ({kind}) did not reach its prompt in {STARTUP:g} s")
        time.sleep(0.2)
    subprocess.run([*tmux, "send-keys", "-t", target, "-l", "--", GREETING], check=True)
    time.sleep(max(settle_for(kind), 0.2))
    subprocess.run([*tmux, "send-keys", "-t", target, "Enter"], check=True)


def _screen(tmux: Sequence[str], target: str) -> str:
    out = subprocess.run(
        [*tmux, "capture-pane", "-p", "-t", target], capture_output=True, text=True, check=False
    )
    return out.stdout


def agent_name(kind: str) -> str:
    """The demo agent that runs ``kind``."""
    return OTHER_AGENTS[kind]
