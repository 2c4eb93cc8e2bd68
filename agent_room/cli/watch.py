"""``agent-room watch``: the delivery worker, headless, until interrupted."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading


def cmd_watch(args: argparse.Namespace) -> int:
    """Run the deliverer in the foreground; stand by while another one holds the lease."""
    from agent_room.adapters.processes import SystemProbe
    from agent_room.adapters.tmux import Tmux
    from agent_room.room import Room
    from agent_room.workers.deliverer import Deliverer

    room = Room.open(os.environ)
    deliverer = Deliverer(room, Tmux(), SystemProbe())
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"agent-room: delivering for the room in {room.home} (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    deliverer.run(stop, debounce=args.debounce, step=args.step)
    room.close()
    return 0
