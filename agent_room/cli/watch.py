"""``agent-room watch``: the delivery worker, the link injector, the memory worker and the
notifier, headless, until interrupted."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from agent_room.room import Room
    from agent_room.ui.settings import NotifySettings


def cmd_watch(args: argparse.Namespace) -> int:
    """Run the deliverer and the injector; each stands by while another one holds its lease.

    Two threads, each with its own connection to the room: a slow tmux command in the
    deliverer never delays a crossing or a timer, and the other way round.
    """
    from agent_room.adapters.processes import SystemProbe
    from agent_room.adapters.tmux import Tmux
    from agent_room.room import Room
    from agent_room.workers.deliverer import Deliverer
    from agent_room.workers.injector import Injector
    from agent_room.workers.memory import MemoryWorker
    from agent_room.workers.native import native_delivery
    from agent_room.workers.wakeup import RoomWatch

    if args.status or args.stop:
        from agent_room.cli.background import cmd_watch_status, cmd_watch_stop

        return cmd_watch_status(args) if args.status else cmd_watch_stop(args)
    notify = _notify_settings()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    opened = _open_rooms(4, stop, Room.open)
    if opened is None:
        return 0
    delivery_room, injector_room, memory_room, notify_room = opened
    memory = MemoryWorker(memory_room, SystemProbe())
    deliverer = Deliverer(
        delivery_room, Tmux(), SystemProbe(), native=native_delivery(delivery_room, os.environ)
    )
    injector = Injector(injector_room, SystemProbe())
    print(
        f"agent-room: delivering and linking for the room {_served(delivery_room)}"
        " (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    # one watch of the room for every worker: a watcher costs the same whether anything
    # changes or not (a send wakes the deliverer through its FIFO, without waiting on it)
    room_watch = RoomWatch(delivery_room.home, debounce=args.debounce, step=args.step, stop=stop)
    worker = threading.Thread(
        target=injector.run,
        args=(stop,),
        kwargs={"room_watch": room_watch},
        name="agent-room-injector",
        daemon=True,
    )
    worker.start()
    remembering = threading.Thread(
        target=memory.run, args=(stop,), name="agent-room-memory", daemon=True
    )
    remembering.start()
    notifying = _start_notifier(notify, notify_room, stop)
    serving = _start_mcp(delivery_room.home, stop)
    idling = _start_idle_exit(stop) if args.background else None
    try:
        deliverer.run(stop, room_watch=room_watch)
    finally:
        stop.set()
        room_watch.join()
        if idling is not None:
            idling.join(timeout=10)
        worker.join(timeout=10)
        remembering.join(timeout=10)
        if notifying is not None:
            notifying.join(timeout=10)
        if serving is not None:
            serving.join(timeout=10)
        notify_room.close()
        delivery_room.close()
        injector_room.close()
        memory_room.close()
    return 0


def _start_idle_exit(stop: threading.Event) -> threading.Thread:
    """The background watch's own end: once no agent has been alive in the room for
    ``IDLE_EXIT`` seconds, or the room is gone, it stops (and forgets its pid file)."""
    import time
    from pathlib import Path

    from agent_room.cli.background import IDLE_EXIT, idle, remove_pid_file, write_pid_file
    from agent_room.core.errors import RoomError
    from agent_room.room import Room

    room = Room.open(os.environ)
    write_pid_file(room.home)
    idle_exit = float(os.environ.get("AGENT_ROOM_WATCH_IDLE_EXIT") or IDLE_EXIT)

    def watch_idle() -> None:
        since = time.monotonic()
        try:
            while not stop.wait(min(5.0, idle_exit / 4)):
                try:
                    quiet = idle(room)
                except RoomError:
                    quiet = False  # a passing fault: ask again at the next pass
                if not quiet:
                    since = time.monotonic()
                elif time.monotonic() - since >= idle_exit or not Path(room.home).is_dir():
                    print("agent-room: no agent in the room for a while: stopping", flush=True)
                    stop.set()
        finally:
            remove_pid_file(room.home)
            room.close()

    thread = threading.Thread(target=watch_idle, name="agent-room-idle-exit", daemon=True)
    thread.start()
    return thread


def _start_mcp(home: str, stop: threading.Event) -> threading.Thread | None:
    """The room's tools for its agents over MCP (``agent_room.mcp.serve``): one server in
    this process for every agent, on the room's loopback port (``AGENT_ROOM_MCP=off``:
    none, and agents use the commands)."""
    if os.environ.get("AGENT_ROOM_MCP", "").lower() in {"off", "0", "no"}:
        return None
    from agent_room.cli.ask import headless_client
    from agent_room.mcp.serve import Serving

    return Serving(home, dict(os.environ), headless_client).start(stop)


def _served(room: Room) -> str:
    """Which room, as the operator named it: a room on PostgreSQL lives in the database
    (this host's directory keeps only its own files), and this watch serves one host."""
    url = room.store.url
    if url is None:
        return f"in {room.home}"
    from agent_room.store.engine import describe

    return f"{describe(url)} as host {room.store.host}"


def _notify_settings() -> NotifySettings:
    """The ``[notify]`` table of the console's settings file (a bad one: one line, exit)."""
    from agent_room.ui.settings import ConsoleSettings

    return ConsoleSettings.load(os.environ).notify


def _start_notifier(
    notify: NotifySettings, room: Room, stop: threading.Event
) -> threading.Thread | None:
    """The notifier in a thread of its own, with the channels that can speak here."""
    if not notify.enabled:
        return None
    from agent_room.adapters.git import GitCli
    from agent_room.adapters.processes import SystemProbe
    from agent_room.core.names import tmux_socket_of
    from agent_room.workers.notifier import Notifier, build_channels

    channels, problems = build_channels(notify, room, tmux_socket_of(os.environ.get("TMUX")))
    for problem in problems:
        print(f"agent-room: {problem}", file=sys.stderr, flush=True)

    def on_problem(channel: str, problem: str | None) -> None:
        if problem is not None:
            print(f"agent-room: notifier: {channel}: {problem}", file=sys.stderr, flush=True)

    notifier = Notifier(
        room,
        SystemProbe(),
        channels,
        policy=notify.policy(),
        on_problem=on_problem,
        git=GitCli(),  # who touches what: the code alerts
    )
    thread = threading.Thread(
        target=notifier.run, args=(stop,), name="agent-room-notifier", daemon=True
    )
    thread.start()
    return thread


def _open_rooms(
    count: int, stop: threading.Event, open_room: Callable[[Mapping[str, str]], Room]
) -> list[Room] | None:
    """``count`` connections to the room, waiting while it cannot be opened (locked past
    the busy timeout, a full disk, a damaged file being restored); None if stopped first.
    An unsafe room is refused at once: that needs the operator, not time."""
    from agent_room.core.errors import RoomUnavailable
    from agent_room.workers.guard import FIRST_BACKOFF, MAX_BACKOFF

    pause, said = FIRST_BACKOFF, ""
    while not stop.is_set():
        rooms: list[Room] = []
        try:
            while len(rooms) < count:
                rooms.append(open_room(os.environ))
        except RoomUnavailable as exc:
            for room in rooms:
                room.close()
            if str(exc) != said:
                said = str(exc)
                print(f"agent-room: {exc} (waiting for the room)", file=sys.stderr, flush=True)
        else:
            return rooms
        stop.wait(pause)
        pause = min(pause * 2, MAX_BACKOFF)
    return None
