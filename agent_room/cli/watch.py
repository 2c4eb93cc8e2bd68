"""``agent-room watch``: the delivery worker, the link injector, the memory worker and
the notifier, headless, until interrupted (``start`` runs one in the background)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from functools import partial
from pathlib import Path

import click

from agent_room.adapters.git import GitCli
from agent_room.adapters.processes import SystemProbe
from agent_room.adapters.tmux import Tmux
from agent_room.cli.ask import HeadlessClients
from agent_room.cli.background import (
    cmd_watch_status,
    cmd_watch_stop,
    idle,
    remove_pid_file,
    write_pid_file,
)
from agent_room.config.notify import NotifySettings
from agent_room.config.settings import RoomSettings
from agent_room.mcp.serve import Serving
from agent_room.room.service import Room
from agent_room.turn.core.errors import RoomError, RoomUnavailable
from agent_room.turn.core.names import tmux_socket_of
from agent_room.turn.store import engine
from agent_room.ui.settings import ConsoleSettings
from agent_room.workers.guard import FIRST_BACKOFF, MAX_BACKOFF, to_stderr
from agent_room.workers.notifier import Notifier, build_channels
from agent_room.workers.supervisor import RESTART_DELAY, Job, Report, State, Supervisor, room_jobs
from agent_room.workers.wakeup import RoomWatch, never


def cmd_watch(*, debounce: int, step: int, background: bool) -> int:
    """Run the room's leased workers; each stands by while another process holds its lease."""
    settings = RoomSettings.load(os.environ)  # a bad setting: one line, exit
    notify = ConsoleSettings.load(os.environ).notify
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    room = _open_room(stop)
    if room is None:
        return 0
    print(
        f"agent-room: delivering and linking for the room {_served(room)} (Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    # one watch of the room for every worker: a watcher costs the same whether anything
    # changes or not (a send wakes the deliverer through its FIFO, without waiting on it)
    room_watch = RoomWatch(room.home, debounce=debounce, step=step, stop=stop)
    jobs = room_jobs(Tmux(), SystemProbe(), room_watch, os.environ)
    if notify.enabled:
        jobs.append(_notifier(notify, room_watch))
    serving = _start_mcp(room.home, stop, settings) if settings.mcp else None
    # the pid file is written before the deliverer listens: whoever sees it listen (start,
    # join) finds the background watch's pid
    idling = _start_idle_exit(stop, settings.watch_idle_exit) if background else None
    removed = partial(_stop_if_removed, room.home, stop)
    room_watch.subscribe(removed, prompt=never)  # noticed within a rest at most
    removed()  # removed before the watch was in place: no file event tells
    workers = Supervisor(
        lambda: Room.open(os.environ, long_lived=True, create=False), _tell, stop=stop
    )
    workers.start(jobs)
    try:
        stop.wait()
    finally:
        stop.set()
        room_watch.join()
        workers.join()
        if idling is not None:
            idling.join(timeout=10)
        if serving is not None:
            serving.join(timeout=10)
        room.close()
    return 0


def _tell(report: Report) -> None:
    """The workers' problems on standard error (the background watch's go to its log)."""
    if report.state in (State.RETRYING, State.RECOVERED):
        to_stderr(report.worker)(report.detail)
    elif report.state is State.FAILED:
        print(
            f"agent-room: {report.worker} stopped: {report.detail}"
            f" (starting it again in {RESTART_DELAY:g} s)",
            file=sys.stderr,
            flush=True,
        )


def _notifier(notify: NotifySettings, room_watch: RoomWatch) -> Job:
    """The notifier, with the channels that can speak here (the others are said once)."""

    def on_problem(channel: str, problem: str | None) -> None:
        if problem is not None:
            print(f"agent-room: notifier: {channel}: {problem}", file=sys.stderr, flush=True)

    def make(room: Room) -> Notifier:
        socket = tmux_socket_of(os.environ.get("TMUX"))
        channels, problems = build_channels(notify, room, socket)
        for problem in problems:
            print(f"agent-room: {problem}", file=sys.stderr, flush=True)
        return Notifier(
            room,
            SystemProbe(),
            channels,
            policy=notify.policy(),
            on_problem=on_problem,
            git=GitCli(),  # who touches what: the code alerts
            room_watch=room_watch,
        )

    return Job("notifier", make)


def _stop_if_removed(home: str, stop: threading.Event) -> None:
    """A watch ends with its room: its workers, opening the room again, would meet
    ``RoomGone`` for ever (they never make it anew). Called on the room's file events."""
    if not stop.is_set() and not Path(home).is_dir():
        print("agent-room: the room was removed: stopping", file=sys.stderr, flush=True)
        stop.set()


def _start_idle_exit(stop: threading.Event, idle_exit: float) -> threading.Thread:
    """The background watch's own end: once no agent has been alive in the room for
    ``idle_exit`` seconds (``RoomSettings.watch_idle_exit``), or the room is gone, it
    stops (and forgets its pid file)."""
    room = Room.open(os.environ, long_lived=True)
    write_pid_file(room.home)

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


def _start_mcp(home: str, stop: threading.Event, settings: RoomSettings) -> threading.Thread:
    """The room's tools for its agents over MCP (``agent_room.mcp.serve``): one server in
    this process for every agent, on the room's loopback port (not started when the
    ``mcp`` setting is off: agents use the commands)."""
    return Serving(home, dict(os.environ), HeadlessClients(settings)).start(stop)


def _served(room: Room) -> str:
    """Which room, as the operator named it: a room on PostgreSQL lives in the database
    (this host's directory keeps only its own files), and this watch serves one host."""
    url = room.store.url
    if url is None:
        return f"in {room.home}"
    return f"{engine.describe(url)} as host {room.store.host}"


def _open_room(stop: threading.Event) -> Room | None:
    """The room, waiting while it cannot be opened (locked past the busy timeout, a full
    disk, a damaged file being restored); None if stopped first. An unsafe room is
    refused at once: that needs the operator, not time."""
    pause, said = FIRST_BACKOFF, ""
    while not stop.is_set():
        try:
            return Room.open(os.environ, long_lived=True)
        except RoomUnavailable as exc:
            if str(exc) != said:
                said = str(exc)
                print(f"agent-room: {exc} (waiting for the room)", file=sys.stderr, flush=True)
        stop.wait(pause)
        pause = min(pause * 2, MAX_BACKOFF)
    return None


# The command (loaded by cli.app when it runs). A send wakes the deliverer through its
# FIFO at once: file events (hooks changing an agent's state) can wait tens of ms, and a
# slower step costs a quarter at rest.


@click.command("watch")
@click.option("--debounce", type=int, default=50, help="file-event debounce, ms")
@click.option("--step", type=int, default=25, help="file-event step, ms")
@click.option("--status", is_flag=True, help="say which process delivers, if any")
@click.option("--stop", is_flag=True, help="stop the room's background watch")
@click.option("--background", is_flag=True, hidden=True, help="started by start and join")
def watch_command(debounce: int, step: int, status: bool, stop: bool, background: bool) -> int:
    if status:
        return cmd_watch_status()
    if stop:
        return cmd_watch_stop()
    return cmd_watch(debounce=debounce, step=step, background=background)
