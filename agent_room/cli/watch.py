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
        f"agent-room: delivering and linking for the room in {delivery_room.home} (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    worker = threading.Thread(
        target=injector.run,
        args=(stop,),
        # a crossing waits for a turn to end anyway: a slower file watch costs nothing
        # there, and halves what an idle room costs
        kwargs={"debounce": max(args.debounce, 50), "step": max(args.step, 25)},
        name="agent-room-injector",
        daemon=True,
    )
    worker.start()
    remembering = threading.Thread(
        target=memory.run, args=(stop,), name="agent-room-memory", daemon=True
    )
    remembering.start()
    notifying = _start_notifier(notify, notify_room, stop)
    try:
        deliverer.run(stop, debounce=args.debounce, step=args.step)
    finally:
        stop.set()
        worker.join(timeout=10)
        remembering.join(timeout=10)
        if notifying is not None:
            notifying.join(timeout=10)
        notify_room.close()
        delivery_room.close()
        injector_room.close()
        memory_room.close()
    return 0


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
        room, SystemProbe(), channels, policy=notify.policy(), on_problem=on_problem
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
