"""PostgreSQL's own client library (libpq) through ``ctypes``: what the room's statements need.

The hooks run on every turn of every agent and ``agent-room send`` on every message, as
fresh processes: importing psycopg costs them 100-150 ms, importing ctypes and loading
libpq about 3 (see docs/guide/machines.md). The statements go out with ``PQexecParams``
(``$1`` parameters, each typed by its Python value, results in text form converted by
column type), or ``PQexec`` for a script without parameters, which is all the store
asks; LISTEN/NOTIFY for the long-lived watchers stays with psycopg.

libpq is the one bundled in psycopg's binary package when it is installed (the one
psycopg itself uses), else the system's (Debian's ``libpq5``). Everything libpq reads
itself works as with any PostgreSQL client: the URL, the ``PG*`` environment, the
password file, TLS settings.

Each connection hands the server's notices to ``store.notices`` (the room's error log),
never to standard error: for a hook or ``send`` that is an agent's terminal.
"""

from __future__ import annotations

import ctypes
import os
import sys
from _thread import allocate_lock, start_new_thread

from agent_room.turn.store.notices import (
    NOTICE_PROCESSOR,
    passfile_refusal,
    quiet,
    warn_once,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_OK, _TUPLES, _IDLE, _ACTIVE, _INTRANS, _INERROR = 1, 2, 0, 1, 2, 3
_SQLSTATE, _PRIMARY = ord("C"), ord("M")
_INTS = {20, 21, 23, 26}
_FLOATS = {700, 701}
_BOOL, _NUMERIC, _TEXT, _INT8, _FLOAT8 = 16, 1700, 25, 20, 701

_lib: Any = None
_early: dict[tuple[str, str], tuple[Any, list[Any]]] = {}
"""Connections begun ahead (``connect_early``): (conninfo, first statement) → (its lock,
what it gave)."""
_SWITCH = sys.getswitchinterval()


class PgError(Exception):
    """A statement or a connection that failed: its SQLSTATE (empty if none) and why."""

    def __init__(self, sqlstate: str, message: str, *, broken: bool = False) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.broken = broken
        """The connection is lost (the server gone, the network down)."""


def lost(sqlstate: str) -> bool:
    """Whether an error's SQLSTATE says the connection is lost: a connection exception
    (class 08), or the server shutting down, crashed or not yet accepting connections."""
    return sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03")


def _load() -> Any:
    """libpq, loaded once per process."""
    global _lib  # noqa: PLW0603 - loaded once per process, on first use
    if _lib is not None:
        return _lib
    for name in (*_bundled(), "libpq.so.5", "libpq.so", "libpq.5.dylib"):
        try:
            lib = _dlopen(name)
            break
        except OSError:
            continue
    else:
        raise PgError("", "libpq (PostgreSQL's client library) is not installed")
    p, i, s, u = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint
    for fn, args, result in (
        ("PQconnectdb", [s], p),
        ("PQstatus", [p], i),
        ("PQerrorMessage", [p], s),
        ("PQfinish", [p], None),
        ("PQtransactionStatus", [p], i),
        ("PQexecParams", [p, s, i, ctypes.POINTER(u), ctypes.POINTER(s), p, p, i], p),
        ("PQexec", [p, s], p),
        ("PQresultStatus", [p], i),
        ("PQresultErrorField", [p, i], s),
        ("PQresultErrorMessage", [p], s),
        ("PQntuples", [p], i),
        ("PQnfields", [p], i),
        ("PQfname", [p, i], s),
        ("PQftype", [p, i], u),
        ("PQgetvalue", [p, i, i], s),
        ("PQgetisnull", [p, i, i], i),
        ("PQcmdTuples", [p], s),
        ("PQclear", [p], None),
        ("PQsetNoticeProcessor", [p, NOTICE_PROCESSOR, p], p),
    ):
        function = getattr(lib, fn)
        function.argtypes = args
        function.restype = result
    _lib = lib
    return lib


def _dlopen(name: str) -> Any:
    """``ctypes.CDLL(name)``, but loading without the GIL.

    ``CDLL`` holds the GIL while the dynamic linker loads libpq and its libraries (2-4
    ms): every other thread of the process (a console's, a watcher's) would stand still
    meanwhile. The C library's own ``dlopen``, called as a foreign function, lets them
    go on; ``CDLL`` then only takes the handle.
    """
    try:
        libc = ctypes.CDLL(None)
        opener, why = libc.dlopen, libc.dlerror
    except (OSError, AttributeError):
        return ctypes.CDLL(name)
    opener.argtypes = [ctypes.c_char_p, ctypes.c_int]
    opener.restype = ctypes.c_void_p
    why.restype = ctypes.c_char_p
    handle = opener(name.encode(), os.RTLD_NOW | os.RTLD_LOCAL)
    if not handle:
        raise OSError((why() or b"cannot load " + name.encode()).decode(errors="replace"))
    return ctypes.CDLL(name, handle=handle)


def _bundled() -> list[str]:
    """The libpq in psycopg's binary package, if installed: the one the watchers' psycopg
    runs on, so every process of the room speaks through the same libpq; and the lighter
    to load (its dozen libraries take 2 ms, the system's score 3.5). Found on the path
    without importing anything (``importlib.util`` alone costs a hook 2 ms)."""
    for entry in sys.path:
        folder = os.path.join(entry or os.curdir, "psycopg_binary.libs")
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        return [os.path.join(folder, name) for name in names if name.startswith("libpq")]
    return []


def lock_timeout(timeout: float) -> str:
    """The statement that sets the connection's lock timeout to ``timeout`` seconds."""
    return f"SET lock_timeout = {int(timeout * 1000)}"


def opening(url: str, timeout: float) -> tuple[str, str]:
    """How the room connects: the connection string (``url`` and the room's defaults,
    those it names itself win) and the statement sent as soon as the server has taken
    the connection: the lock timeout, and the version of the room's schema (its table
    is ``store.postgres``'s; the two fail together in a room not made yet). A ``SET``
    and a plain ``SELECT`` cost a new server process less than ``set_config`` and
    ``max``, whose functions it would look up first (0.2 against 0.5 ms)."""
    extra = {
        "connect_timeout": str(max(2, round(timeout))),
        "application_name": "agent-room",
        "client_encoding": "UTF8",
    }
    url, why = passfile_refusal(url, os.environ)
    if why is not None:
        warn_once(why)
    query = "&".join(f"{k}={v}" for k, v in extra.items() if f"{k}=" not in url)
    first = f"{lock_timeout(timeout)}; SELECT version FROM agent_room_schema"
    return f"{url}{'&' if '?' in url else '?'}{query}", first


def connect_early(info: str, first: str) -> None:
    """Load libpq, then connect and send ``first`` in a thread of its own while the
    caller goes on importing.

    Connecting and asking the room's first question (waits on the GIL-free side of
    ctypes, 6-7 ms with SCRAM on the loopback) take a hook longer than importing its
    handlers: they are what it waits for. libpq is loaded here first: beside the imports
    the dynamic linker's mappings and their page faults slow each other (2 ms alone,
    5-6 beside). The caller returns only once the thread is connecting (a new thread
    would otherwise wait for the GIL until the imports let go of it, on a busy machine
    for milliseconds), and meanwhile the interpreter hands the GIL over every 0.2 ms,
    not 5, so that the thread is not kept waiting between its two steps either. The
    ``Connection`` made next with the same ``info`` and ``first`` takes this one over,
    fault included.
    """
    done, connecting = allocate_lock(), allocate_lock()
    done.acquire()
    connecting.acquire()
    given: list[Any] = []
    _early[(info, first)] = (done, given)
    try:
        lib = _load()
    except PgError as exc:  # raised by the connection's maker, as without this
        given.append(exc)
        done.release()
        return

    def begin() -> None:
        try:
            connect = lib.PQconnectdb
            connecting.release()
            handle = connect(info.encode())
            given.append(handle)
            quiet(lib, handle)
            if lib.PQstatus(handle) == 0:
                given.append(lib.PQexec(handle, first.encode("utf-8")))
        except BaseException as exc:  # noqa: BLE001 - handed to the connection's maker
            given[:] = [exc]
        finally:
            if connecting.locked():
                connecting.release()
            done.release()

    sys.setswitchinterval(0.0002)
    start_new_thread(begin, ())
    connecting.acquire(timeout=1.0)


def _connected(info: str, first: str) -> list[Any]:
    """A handle to the server and, if it was sent already, ``first``'s raw result: the
    connection begun early for ``info`` and ``first``, else a new one."""
    early = _early.pop((info, first), None)
    if early is None:
        lib = _load()
        handle = lib.PQconnectdb(info.encode())
        quiet(lib, handle)
        return [handle]
    done, given = early
    with done:
        sys.setswitchinterval(_SWITCH)
    if isinstance(given[0], BaseException):
        raise given[0]
    return given


class Result:
    """What one statement gave back."""

    __slots__ = ("columns", "rowcount", "rows")

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self.columns = columns
        self.rows = rows
        self.rowcount = rowcount


def _value(oid: int, raw: bytes) -> Any:
    if oid in _INTS:
        return int(raw)
    if oid in _FLOATS:
        return float(raw)
    if oid == _BOOL:
        return raw == b"t"
    if oid == _NUMERIC:
        return int(raw) if raw.lstrip(b"-").isdigit() else float(raw)
    return raw.decode("utf-8")


def _param(value: Any) -> tuple[int, bytes | None]:
    """A parameter's type (so that a function taking anything knows it) and its text."""
    if value is None:
        return 0, None
    if isinstance(value, bool):
        return _BOOL, b"true" if value else b"false"
    if isinstance(value, int):
        return _INT8, str(value).encode()
    if isinstance(value, float):
        return _FLOAT8, repr(value).encode()
    if isinstance(value, str):
        return _TEXT, value.encode("utf-8")
    return 0, str(value).encode("utf-8")


class Connection:
    """One libpq connection, used by one thread at a time.

    ``first`` (a statement without parameters) is sent as soon as the server has taken
    the connection; what it gave is ``first``: its result, or the error it met.
    """

    def __init__(self, conninfo: str, first: str) -> None:
        self.lock = allocate_lock()
        """One statement at a time: two threads must never interleave on the wire."""
        given = _connected(conninfo, first)
        self.handle = given[0]
        self.lib = _load()
        if self.lib.PQstatus(self.handle) != 0:
            message = (self.lib.PQerrorMessage(self.handle) or b"").decode(errors="replace")
            self.lib.PQfinish(self.handle)
            self.handle = None
            raise PgError("08006", message.strip() or "cannot connect", broken=True)
        self.first: Result | PgError
        try:
            if len(given) > 1:
                self.first = self._read(given[1])
            else:
                self.first = self.script(first)
        except PgError as exc:
            self.first = exc

    @property
    def broken(self) -> bool:
        """Whether the connection is closed or lost."""
        return self.handle is None or self.lib.PQstatus(self.handle) != 0

    @property
    def in_transaction(self) -> bool:
        """Inside a transaction (a failed one included)."""
        if self.handle is None:
            return False
        return bool(self.lib.PQtransactionStatus(self.handle) in (_INTRANS, _INERROR))

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one statement with ``$1``... parameters; every row fetched."""
        with self.lock:
            return self._execute(sql, params)

    def script(self, sql: str) -> Result:
        """Run statements without parameters (``;`` between them) in one round trip: the
        last one's result, or the error of the first that fails (the rest not run)."""
        with self.lock:
            if self.handle is None:
                raise PgError("08003", "the connection is closed", broken=True)
            return self._read(self.lib.PQexec(self.handle, sql.encode("utf-8")))

    def _execute(self, sql: str, params: Sequence[Any]) -> Result:
        if self.handle is None:
            raise PgError("08003", "the connection is closed", broken=True)
        count = len(params)
        types = (ctypes.c_uint * count)()
        values = (ctypes.c_char_p * count)()
        for index, value in enumerate(params):
            types[index], values[index] = _param(value)
        return self._read(
            self.lib.PQexecParams(
                self.handle, sql.encode("utf-8"), count, types, values, None, None, 0
            )
        )

    def _read(self, result: Any) -> Result:
        """A statement's result (freed once read), or its error raised."""
        lib = self.lib
        try:
            status = lib.PQresultStatus(result) if result else -1
            if status not in (_OK, _TUPLES):
                raise self._error(result)
            if status == _OK:
                tuples = lib.PQcmdTuples(result)
                return Result([], [], int(tuples) if tuples else -1)
            fields = lib.PQnfields(result)
            columns = [lib.PQfname(result, c).decode() for c in range(fields)]
            oids = [lib.PQftype(result, c) for c in range(fields)]
            rows = []
            for r in range(lib.PQntuples(result)):
                rows.append(
                    tuple(
                        None
                        if lib.PQgetisnull(result, r, c)
                        else _value(oids[c], lib.PQgetvalue(result, r, c))
                        for c in range(fields)
                    )
                )
            return Result(columns, rows, len(rows))
        finally:
            if result:
                lib.PQclear(result)

    def _error(self, result: Any) -> PgError:
        lib = self.lib
        if not result:
            message = (lib.PQerrorMessage(self.handle) or b"").decode(errors="replace")
            return PgError("08006", message.strip(), broken=True)
        state = (lib.PQresultErrorField(result, _SQLSTATE) or b"").decode()
        primary = lib.PQresultErrorField(result, _PRIMARY)
        whole = lib.PQresultErrorMessage(result) or lib.PQerrorMessage(self.handle) or b""
        message = (primary or whole).decode(errors="replace").strip()
        return PgError(state, message, broken=self.broken or lost(state))

    def close(self) -> None:
        """Let the server go."""
        with self.lock:
            if self.handle is not None:
                self.lib.PQfinish(self.handle)
                self.handle = None
