"""The ``agent-room`` command line: thin, fast, and never a traceback for user errors.

Data goes to stdout, diagnostics to stderr. The hooks, ``send`` and ``status`` run on
the standard library alone (their quick paths); every other command goes to the click
command line of ``cli.app``, which loads the command's module only when it runs.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run one command; return the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list and sys.stdin.isatty() and sys.stdout.isatty():
        args_list = ["console"]  # `agent-room` alone opens the console; piped, it helps
    if args_list[:1] == ["hook"]:
        if argv is None:  # a hook process: short, making no cycles worth collecting
            import gc

            gc.disable()  # (the collector would walk the modules as they load: 0.2 ms)
        from agent_room.turn.hooks import run_hook

        return _done(run_hook(args_list[1:], os.environ, sys.stdin.buffer), argv, args_list)

    from agent_room.turn.core.errors import RoomError

    try:
        if args_list[:1] == ["status"]:
            from agent_room.turn.status import quick_status

            status = quick_status(args_list[1:], os.environ)
            if status is not None:
                return status
        if args_list[:1] == ["send"]:
            from agent_room.turn.send import quick_send

            quick = quick_send(args_list[1:], os.environ)
            if quick is not None:
                return _done(quick, argv, args_list)
        return _done(_parse_and_run(args_list), argv, args_list)
    except RoomError as exc:
        from agent_room.turn.core.printable import printable

        # errors quote what was typed or stored: shown, never acted on by the terminal
        print(f"agent-room: {printable(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `| head`): not an error worth a traceback
        sys.stderr.close()
        return 0
    except Exception as exc:
        if not _database_error(exc):
            raise
        # a full disk, a damaged file, a lock held too long: the room's state, not a bug
        print(f"agent-room: the room database in {_home()} failed: {exc}", file=sys.stderr)
        return 1


def _exit_now(code: int) -> None:
    """End the process without the interpreter's teardown, which frees every module one
    by one (about a millisecond of every hook, on every turn of every agent). Only once
    the work is done: the room's connection closed, nothing registered to run at exit;
    the output is flushed here."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - no contextlib on the hooks' path
            stream.flush()
        except (OSError, ValueError):
            pass  # the reader went away: nothing left to tell it
    os._exit(code)


SHORT = frozenset({"hook", "send", "who", "history"})
"""Commands done once they have printed: their process ends without the interpreter's
teardown (``_exit_now``), which costs every hook about a millisecond, a send a few of the
CPU the deliverer is typing with, and ``who`` more the more sessions it printed."""


def _done(code: int, argv: list[str] | None, args_list: list[str]) -> int:
    """``code``; a command of ``SHORT`` run as the process's own command line ends here."""
    if argv is None and args_list[:1] and args_list[0] in SHORT:
        _exit_now(code)
    return code


def _database_error(exc: Exception) -> bool:
    """Whether ``exc`` is SQLite's (without importing sqlite3 where nothing did; the store
    loads the C module ``_sqlite3`` alone)."""
    sqlite3 = sys.modules.get("_sqlite3")
    return sqlite3 is not None and isinstance(exc, sqlite3.Error)


def _home() -> str:
    from agent_room.turn.store.home import room_home

    return room_home(os.environ)


def _parse_and_run(args_list: list[str]) -> int:
    from agent_room.cli.app import run

    if _reads_only(args_list):
        from agent_room.turn.store.attention import room_exists
        from agent_room.turn.store.home import room_home

        # one that is not private is refused, not passed over
        if not room_exists(room_home(os.environ)):
            return _in_an_empty_room(args_list)
    return run(args_list)


READ_ONLY = frozenset(
    {
        *("who", "tree", "history", "handovers", "inbox", "peek"),
        *("links", "timers", "ledger", "checkpoints", "notify"),
    }
)
"""Commands that only read the room: where there is none they answer as an empty room
would, and make none (a typo in AGENT_ROOM_HOME must not leave rooms behind)."""
WRITING = {
    "intercom": {"import", "forget", "settings"},
    "loops": {"release", "settings"},
    "entities": {"merge", "resolve", "--strategy", "--threshold"},
    "transport": {"native-first", "tmux", "native"},
}
"""Commands that read unless one of these words follows them."""


SETTINGS = frozenset({"link", "loops", "memory", "intercom"})
"""Commands whose ``settings`` alone shows the settings (with a value, changes them)."""


def _reads_only(args_list: list[str]) -> bool:
    command, rest = args_list[0] if args_list else "", set(args_list[1:])
    if command in READ_ONLY or (command in SETTINGS and args_list[1:] == ["settings"]):
        return True
    if command == "resume" and "--print" in rest:
        return True
    return command in WRITING and not rest & WRITING[command]


def _in_an_empty_room(args_list: list[str]) -> int:
    """Run a reading command against a throw-away empty room instead of making one."""
    import tempfile

    from agent_room.cli.app import run

    saved = os.environ.get("AGENT_ROOM_HOME")
    with tempfile.TemporaryDirectory(prefix="agent-room-empty-") as tmp:
        os.environ["AGENT_ROOM_HOME"] = f"{tmp}/room"
        try:
            code = run(args_list)
        finally:
            if saved is None:
                del os.environ["AGENT_ROOM_HOME"]
            else:
                os.environ["AGENT_ROOM_HOME"] = saved
    return code
