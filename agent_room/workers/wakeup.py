"""Wake-ups for the workers: pokes from processes that just queued work (the listening
end of ``store.wake``), and one watch of the room directory shared by every worker."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import watchfiles
from watchfiles import Change

from agent_room.adapters import inotify
from agent_room.adapters.inotify import DirectoryEvents
from agent_room.turn.core.errors import RoomError
from agent_room.turn.store.engine import database_url
from agent_room.turn.store.home import DB_NAME
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.turn.store.wake import not_a_poke, wake_path

Changes = Iterable[tuple[object, str]]


class WakeListener:
    """Holds ``wake.fifo`` open while its deliverer holds the lease.

    The FIFO is opened for reading and writing: a reader alone would see end-of-file,
    and be woken for ever, each time a sender closes its end.
    """

    def __init__(self, home: str) -> None:
        self.path = Path(wake_path(home))
        self.fd: int | None = None

    def fileno(self) -> int:
        """For ``select``; -1 while closed."""
        return -1 if self.fd is None else self.fd

    def bind(self) -> str | None:
        """Listen, making the private FIFO if needed, and keep listening on the one in
        the room (another process may have put something in its place since: it is
        replaced). Why direct wake-ups are off, if they are (file events still arrive)."""
        if self.fd is not None and self._still_there():
            return None
        self.close()
        try:
            self._make()
            fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):  # replaced between the two calls
                os.close(fd)
                return f"{self.path} changed while it was opened"
            self.fd = fd
        except OSError as exc:
            return f"{self.path} cannot be used for wake-ups: {exc.strerror or exc}"
        return None

    def _still_there(self) -> bool:
        """Whether the FIFO held open is still the one at the room's path."""
        assert self.fd is not None
        try:
            held, there = os.fstat(self.fd), self.path.lstat()
        except OSError:
            return False
        return stat.S_ISFIFO(there.st_mode) and (there.st_dev, there.st_ino) == (
            held.st_dev,
            held.st_ino,
        )

    def _make(self) -> None:
        """A FIFO at the path, replacing whatever else is there (an empty directory
        too; anything with contents is refused, not removed)."""
        try:
            mode = self.path.lstat().st_mode
        except FileNotFoundError:
            os.mkfifo(self.path, 0o600)
            return
        if stat.S_ISFIFO(mode):
            return
        if stat.S_ISDIR(mode):
            try:
                self.path.rmdir()
            except OSError as exc:
                raise OSError(
                    exc.errno, f"a directory is in its place ({exc.strerror}): remove it"
                ) from None
        else:
            self.path.unlink()
        os.mkfifo(self.path, 0o600)

    def drain(self) -> int:
        """Read every poke waiting; how many bytes there were."""
        count = 0
        while self.fd is not None:
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # nothing left (EAGAIN)
                break
            count += len(chunk)
            if not chunk:
                break
        return count

    def close(self) -> None:
        """Stop listening; the FIFO stays for the next deliverer."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


LISTEN_WAIT = 5.0
"""How long a subscriber waits for PostgreSQL's LISTEN (the server may be away)."""
STOP_CHECK = 2.0
"""Seconds between two looks at a quiet watch's ``stop``, its only wake-ups at rest
(``close`` and ``join`` end the wait at once)."""
_DATABASE_FILES = {DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"}
OWN_DEBOUNCE = 10
"""The debounce (ms) of a watch that a worker run on its own keeps (``own_watch``)."""
OWN_STEP = 5
"""The step (ms) of a watch that a worker run on its own keeps."""
RELAXED = 1.0
"""Seconds a watch rests after a burst while none of its listeners needs the next change
at once (a console whose workers stand by, its reader between two pictures): the kernel
keeps the events meanwhile, and the burst after the rest brings them all. A listener
that needs changes at once again says so (``hurry``)."""


def never() -> bool:
    """A listener's ``prompt`` that never needs a change at once."""
    return False


class RoomWatch:
    """One watch of the room directory, fanned out to every worker of a process.

    A process keeps one watch, not one per worker (the deliverer, the injector, the
    console's reader): one thread, asleep until the kernel reports a change
    (``adapters.inotify``; where there is none, watchfiles, which wakes every ``step``
    ms whether anything changed or not). It starts with its first listener and ends when
    ``stop`` is set; each listener is called on every burst of changes it wants, and
    once more when the watch ends (so that it looks at its own stop).
    """

    def __init__(self, home: str, *, debounce: int, step: int, stop: threading.Event) -> None:
        self.home = home
        self.debounce = debounce
        self.step = step
        self.stop = stop
        self._lock = threading.Lock()
        self._listeners: dict[Callable[[], None], Callable[[str], bool] | None] = {}
        self._hosts: dict[Callable[[], None], str] = {}
        self._prompt: dict[Callable[[], None], Callable[[], bool]] = {}
        self._hurried = threading.Event()
        """Ends a rest (``_rest``): a listener needs changes at once, or the watch ends."""
        self._listening = threading.Event()
        """On PostgreSQL: the LISTEN is in place, or was waited for (at once on SQLite)."""
        self._thread: threading.Thread | None = None
        self._events: DirectoryEvents | None = None
        self._counted = False
        """Whether the room's change count tells renewals from changes (SQLite)."""
        self._store: SqliteStore | None = None
        self._count: int | None = None
        """The room's change count at the last burst of database events fanned out."""

    def subscribe(
        self,
        wake: Callable[[], None],
        want: Callable[[str], bool] | None = None,
        *,
        host: str | None = None,
        prompt: Callable[[], bool] | None = None,
    ) -> None:
        """Call ``wake`` on room changes (only those to a path ``want`` accepts; on
        PostgreSQL, with ``host``, only those concerning that host's sessions).

        ``prompt`` says whether the listener needs the next change at once (always, if
        not given): while none does, the watch rests ``RELAXED`` after each burst.

        On PostgreSQL this waits (a few seconds at most) for the LISTEN to be in place,
        so that no change made after it returns goes unheard."""
        with self._lock:
            self._listeners[wake] = want
            if host is not None:
                self._hosts[wake] = host
            if prompt is not None:
                self._prompt[wake] = prompt
            if self._thread is None and not self.stop.is_set():
                events = self._events = self._watch_directory()  # on at once
                try:
                    url = database_url(self.home)
                except RoomError:  # said by the room's own opening; the files stay watched
                    url = None
                if url is None:
                    self._listening.set()
                    self._counted = True
                else:  # the room's changes come from the server, not from files
                    threading.Thread(
                        target=self._listen, args=(url,), name="agent-room-listen", daemon=True
                    ).start()
                self._thread = threading.Thread(
                    target=self._run, args=(events,), name="agent-room-watchfiles", daemon=True
                )
                self._thread.start()
        if not self.stop.is_set():
            self._listening.wait(LISTEN_WAIT)
            self._listening.set()  # waited for once: with the server away, not again

    def unsubscribe(self, wake: Callable[[], None]) -> None:
        """Stop calling ``wake`` (it is not called once this returns)."""
        with self._lock:
            self._listeners.pop(wake, None)
            self._hosts.pop(wake, None)
            self._prompt.pop(wake, None)

    def hurry(self) -> None:
        """End a rest now: a listener needs changes at once again (from any thread)."""
        self._hurried.set()

    def close(self) -> None:
        """Stop the watch now (``stop`` alone is looked at every ``STOP_CHECK``)."""
        self.stop.set()
        self._hurried.set()
        if self._events is not None:
            self._events.interrupt()

    def join(self, timeout: float = 2.0) -> None:
        """Wait for the watch to end (after ``stop``)."""
        if self.stop.is_set() and self._events is not None:
            self._events.interrupt()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=timeout)

    def _watch_directory(self) -> DirectoryEvents | None:
        """The kernel's events of the room directory; None where there is no inotify (or
        it refuses: watchfiles then watches, and says what is wrong)."""
        if inotify.available():
            try:
                return DirectoryEvents(self.home)
            except OSError:
                pass
        return None

    def _run(self, events: DirectoryEvents | None) -> None:
        try:
            if events is None:
                self._run_watchfiles()
                return
            try:
                self._run_inotify(events)
            finally:
                events.close()
        finally:
            if self._store is not None:
                self._store.close()
            self._fan_out(None)

    def _run_inotify(self, events: DirectoryEvents) -> None:
        """Sleep until the kernel reports a change (looking at ``stop`` every
        ``STOP_CHECK``); then gather the burst until it pauses for ``step`` ms, at most
        ``debounce`` ms (``_burst``), and fan it out.

        A burst passed over (the count stood still) is looked at once more with the next
        burst (a renewal comes about every half second in a room with workers) or at the
        next look at ``stop``: a writer held up between its last write and making its
        commit seen, longer than a ``step``, is then heard late, not missed."""
        passed_over: Sequence[tuple[object, str]] = ()
        while not self.stop.is_set():
            if not events.wait(STOP_CHECK):
                if passed_over and self._count_moved():
                    self._fan_out(passed_over)
                passed_over = ()
                continue
            paths = self._burst(events)
            changes = [(None, path) for path in paths if not_a_poke(None, path)]
            if changes and not self.stop.is_set():
                passed_over = () if self._file_changes(changes) else changes
                self._rest()

    def _rest(self) -> None:
        """After a burst: rest ``RELAXED`` while no listener needs the next change at
        once (a change made meanwhile waits in the kernel's queue, not lost)."""
        self._hurried.clear()
        with self._lock:
            prompt = any(self._prompt.get(wake, _always)() for wake in self._listeners)
        if not prompt:
            self._hurried.wait(RELAXED)

    def _burst(self, events: DirectoryEvents) -> set[str]:
        """The paths of a burst whose first events just arrived: read again after each
        ``step`` ms until a step brings nothing (or ``debounce`` ms have passed). A
        commit writes its pages one by one, each an event: woken by each, the watch
        would pass a few dozen times a message."""
        paths = events.read()
        end = time.monotonic() + self.debounce / 1000
        while (left := end - time.monotonic()) > 0:
            if self.stop.wait(min(self.step / 1000, left)):
                break
            more = events.read()
            if not more:
                break
            paths |= more
        return paths

    def _run_watchfiles(self) -> None:
        """Where there is no inotify: watchfiles, which wakes every ``step`` ms."""
        for changes in watchfiles.watch(
            self.home,
            debounce=self.debounce,
            step=self.step,
            stop_event=self.stop,
            raise_interrupt=False,
            watch_filter=not_a_poke,
        ):
            self._file_changes(list(changes))

    def _file_changes(self, changes: Sequence[tuple[object, str]]) -> bool:
        """Fan a burst of file events out, unless it touched only the room's database and
        the room's change count stands where the last burst left it: a worker renewed its
        lease (about every second) or a host was seen, which no listener acts on (see
        ``store.db.write_transaction``). Whether it was fanned out."""
        database = all(Path(path).name in _DATABASE_FILES for _change, path in changes)
        if database and self._counted and not self._count_moved():
            return False
        self._fan_out(changes)
        return True

    def _count_moved(self) -> bool:
        """Whether the room's change count moved since the last look (or cannot be read)."""
        try:
            if self._store is None:
                self._store = SqliteStore(self.home, create=False)
            self._store.reopen_if_moved()  # a room restored from a backup: its new file
            count = self._store.changes()
        except Exception:  # noqa: BLE001 - a room locked, moved or gone: the listeners look
            return True
        moved = count is None or count != self._count
        self._count = count
        return moved

    def _listen(self, url: str) -> None:
        """Fan PostgreSQL's wake-ups out as changes of the room's database."""
        from agent_room.store.listen import listen  # noqa: PLC0415 - psycopg, 80 ms: PostgreSQL rooms only

        path = str(Path(self.home) / DB_NAME)  # what a write to SQLite would touch
        changed = {(Change.modified, path), (Change.modified, path + "-wal")}
        listen(
            url,
            self.stop,
            lambda host: self._fan_out(changed, host),
            self._listening.set,
            stop_check=STOP_CHECK,
        )

    def _fan_out(self, changes: Changes | None, host: str | None = None) -> None:
        """``host``: the host a wake-up from PostgreSQL concerns (``""`` none in
        particular); ``None`` for every change that may concern any host."""
        paths = None if changes is None else [path for _change, path in changes]
        with self._lock:  # under the lock: a listener gone is never called again
            for wake, want in self._listeners.items():
                if host is not None and self._hosts.get(wake, host) != host:
                    continue  # another host's sessions: its own deliverer serves them
                if paths is None or want is None or any(want(path) for path in paths):
                    wake()


def _always() -> bool:
    return True


def own_watch(home: str, stop: threading.Event) -> RoomWatch:
    """A watch of the room for one worker run on its own, outside a process that shares
    one (``workers.supervisor``): it ends with the worker's ``stop``."""
    return RoomWatch(home, debounce=OWN_DEBOUNCE, step=OWN_STEP, stop=stop)


class ChangePipe:
    """A pipe that the room's changes make readable, for a worker that waits on file
    descriptors (``select``, ``poll``) beside others."""

    def __init__(self) -> None:
        self.fd, self._write = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(self._write, False)

    def signal(self) -> None:
        """Make the pipe readable (from any thread)."""
        with contextlib.suppress(OSError):  # full: already signalled; closed: stopping
            os.write(self._write, b"!")

    def drain(self) -> None:
        """Take the signals waiting, if any."""
        with contextlib.suppress(BlockingIOError):
            os.read(self.fd, 4096)

    def close(self) -> None:
        os.close(self.fd)
        os.close(self._write)


@contextlib.contextmanager
def room_changes(
    shared: RoomWatch | None,
    home: str,
    stop: threading.Event,
    wake: Callable[[], None],
    *,
    host: str | None = None,
    prompt: Callable[[], bool] | None = None,
) -> Iterator[None]:
    """Call ``wake`` on the room's changes while inside: through the process's one watch
    (``shared``), or through a watch of the worker's own, ended on leaving. ``host`` and
    ``prompt`` as ``RoomWatch.subscribe``'s."""
    watcher = shared or own_watch(home, stop)
    watcher.subscribe(wake, host=host, prompt=prompt)
    try:
        yield
    finally:
        watcher.unsubscribe(wake)
        if watcher is not shared:
            watcher.close()
            watcher.join(timeout=5)
