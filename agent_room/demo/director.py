"""The demo's director: the operator's hands at the start, and a little traffic later.

It types each agent's first prompt once the agent sits idle at its prompt (through the
same safe typing path as the delivery worker: only into the registered agent's pane,
only when nothing else is about to be typed there), then every few seconds asks one
idle agent to ping another, so messages keep flowing while a newcomer watches. With
``--claude`` it also serves the model stand-in the real clients talk to, and writes its
URL to ``--url-file`` first.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_room.adapters.tmux import Tmux, TmuxError
from agent_room.core.delivery import settle_for
from agent_room.demo.client_api import StandIn
from agent_room.demo.conversation import AGENTS, LATER, PING, PROMPTS, demo_script
from agent_room.demo.model_api import ModelApi
from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomError

PINGS = (("backend", "infra"), ("infra", "frontend"), ("frontend", "backend"))
"""Who pings whom, in turn (@mobile sits in its permission dialog)."""
OTHER_PINGS = {"codex": ("backend", "reviewer"), "gemini": ("frontend", "docs")}
"""Who pings the Codex and Gemini agents of ``demo --codex`` / ``--gemini``."""
ENTERS = 3
"""Extra Enters at most for a prompt that was typed but not submitted."""
TURN = 60.0
"""Seconds a first prompt's turn may take before the next agent gets its prompt."""


class Director:
    """Types prompts into the demo's agents on behalf of the operator."""

    def __init__(
        self, room: Room, *, interval: float, pings: int, clients: Sequence[str] = ()
    ) -> None:
        self.room = room
        self.tmux = Tmux()
        self.interval = interval
        self.pings = pings
        self.rounds = (*(OTHER_PINGS[k] for k in clients), *PINGS)

    def _ready(self, name: str) -> dict[str, Any] | None:
        """@name's session if it is idle at its prompt with nothing on its way to it."""
        row = self.room.store.holder(name)
        if row is None or row["state"] != "idle" or not row["pane"]:
            return None
        if self.room.store.queued(name) or self.room.store.open_nudge(name) is not None:
            return None
        return row

    def type(self, name: str, text: str) -> bool:
        """Type ``text`` into @name's pane if it is ready, and see it submitted."""
        row = self._ready(name)
        if row is None:
            return False
        socket, pane = row["tmux_socket"], str(row["pane"])
        if self.tmux.typing_refusal(socket, pane, row["pid"], row["pid_start"]):
            return False
        try:
            self.tmux.type_line(socket, pane, text, settle=settle_for(str(row["agent"])))
            # a client that has only just started can drop the first Enter: press it again
            for _ in range(ENTERS):
                if self._started(row, text):
                    return True
                if text in self.tmux.capture(socket, pane):
                    self.tmux.press_enter(socket, pane)
        except TmuxError:
            return False
        return self._started(row, text)

    def _started(self, row: dict[str, Any], text: str, wait: float = 2.0) -> bool:
        """Whether the agent's hook saw the prompt ``text`` (waits up to ``wait`` seconds)."""
        deadline = time.monotonic() + wait
        while True:
            turns = self.room.store.turns(str(row["session_id"]), limit=5)
            if any((t["prompt"] or "").strip() == text for t in turns):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    def _done(self, name: str, prompt: str) -> bool:
        """Whether @name finished the turn ``prompt`` started, or sits in a dialog."""
        row = self.room.store.holder(name)
        if row is None or row["state"] in ("waiting", "ended"):
            return True
        turns = self.room.store.turns(str(row["session_id"]), limit=5)
        return any((t["prompt"] or "").strip() == prompt and t["stopped_at"] for t in turns)

    def run(self, stop: threading.Event) -> None:
        """First prompts one agent at a time, then pings until done or stopped."""
        # everyone is in the room first: a message to a name nobody holds yet is refused
        while not stop.is_set() and not all(self.room.store.holder(n) for n in AGENTS):
            stop.wait(0.2)
        for name, prompt in [*PROMPTS.items(), LATER]:
            while not stop.is_set() and not self.type(name, prompt):
                stop.wait(0.2)
            # let the turn run before the next prompt: the story reads in order
            deadline = time.monotonic() + TURN
            while not stop.wait(0.2) and time.monotonic() < deadline:
                if self._done(name, prompt):
                    break
        sent = 0
        turn = 0
        while sent < self.pings and not stop.wait(self.interval):
            sender, peer = self.rounds[turn % len(self.rounds)]
            turn += 1
            if self.type(sender, f"{PING} {peer}"):
                sent += 1


def main(argv: Sequence[str] | None = None) -> int:
    """Direct the demo room named by $AGENT_ROOM_HOME until killed."""
    parser = argparse.ArgumentParser(prog="python -m agent_room.demo.director")
    parser.add_argument("--claude", action="store_true", help="serve the model stand-in too")
    parser.add_argument("--url-file", type=Path, help="where to write the model stand-in's URL")
    parser.add_argument("--interval", type=float, default=12.0, help="seconds between pings")
    parser.add_argument("--pings", type=int, default=50, help="pings at most")
    parser.add_argument(
        "--clients", default="", help="codex,gemini: serve their stand-in and ping them too"
    )
    parser.add_argument("--client-url-file", type=Path, help="where to write its URL")
    args = parser.parse_args(argv)
    clients = [k for k in args.clients.split(",") if k in OTHER_PINGS]
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    api = None
    if args.claude:
        api = ModelApi(demo_script()).start()
        if args.url_file is not None:
            partial = args.url_file.with_name(args.url_file.name + ".part")
            partial.write_text(api.url + "\n")
            partial.replace(args.url_file)  # readers never see half a URL
        print(f"model stand-in at {api.url}", file=sys.stderr, flush=True)
    others = None
    if clients:
        others = StandIn().__enter__()
        if args.client_url_file is not None:
            partial = args.client_url_file.with_name(args.client_url_file.name + ".part")
            partial.write_text(others.url + "\n")
            partial.replace(args.client_url_file)
        print(f"Codex / Gemini stand-in at {others.url}", file=sys.stderr, flush=True)
    try:
        room = Room.open(os.environ)
    except RoomError as exc:
        print(f"agent-room: {exc}", file=sys.stderr)
        return 1
    print("directing the demo: first prompts, then a ping now and then", file=sys.stderr)
    Director(room, interval=args.interval, pings=args.pings, clients=clients).run(stop)
    print("done directing; the room keeps running", file=sys.stderr, flush=True)
    stop.wait()
    room.close()
    if api is not None:
        api.close()
    if others is not None:
        others.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
