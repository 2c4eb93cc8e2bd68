"""The command line as a user meets it: real processes, exit codes and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_room.core.models import Message
from agent_room.room.service import Room
from tests.cli.conftest import one_line_error
from tests.conftest import FIXTURES, Cli


@pytest.fixture
def joined(cli: Cli) -> Cli:
    assert cli("join", "backend").code == 0
    assert cli("join", "frontend", "--pane", "%7").code == 0
    return cli


def test_scripted_session(joined: Cli) -> None:
    sent = joined("send", "@frontend", "the", "contract", "is", "ready", name="backend")
    assert sent.code == 0
    assert sent.out.strip().isdigit()
    inbox = joined("inbox", name="frontend")
    assert inbox.code == 0
    assert inbox.out.startswith("from: backend\nto: frontend\ntimestamp: ")
    assert inbox.out.endswith("---\nthe contract is ready\n")
    again = joined("inbox", name="frontend")
    assert again.out == ""
    assert "no new messages" in again.err


def test_body_from_stdin_and_file(joined: Cli, tmp_path: Path) -> None:
    assert joined("send", "@frontend", name="backend", stdin="from stdin\n").code == 0
    body = tmp_path / "body.md"
    body.write_text("from a file\nline two\n")
    assert joined("send", "@frontend", "--file", str(body), name="backend").code == 0
    out = json.loads(joined("inbox", "--json", name="frontend").out)
    assert [m["body"] for m in out] == ["from stdin\n", "from a file\nline two\n"]
    for item in out:
        Message.model_validate(item)


def test_sender_from_as_and_from_pane(joined: Cli) -> None:
    assert joined("send", "@frontend", "via --as", "--as", "backend").code == 0
    assert joined("send", "@backend", "via pane", env={"TMUX_PANE": "%7"}).code == 0
    history = json.loads(joined("history", "--json").out)
    assert [(m["sender"], m["body"]) for m in history] == [
        ("backend", "via --as"),
        ("frontend", "via pane"),
    ]


def test_inbox_peek_does_not_mark_read(joined: Cli) -> None:
    joined("send", "@frontend", "peeked", name="backend")
    assert "peeked" in joined("inbox", "--peek", name="frontend").out
    assert "peeked" in joined("inbox", name="frontend").out


def test_history_count_and_default(joined: Cli) -> None:
    for i in range(25):
        joined("send", "@frontend", f"m{i}", name="backend")
    assert len(json.loads(joined("history", "--json").out)) == 20
    three = json.loads(joined("history", "3", "--json").out)
    assert [m["body"] for m in three] == ["m22", "m23", "m24"]
    assert joined("history", "3").out.count("\nfrom: ") == 2


def test_who_json_has_the_documented_fields(joined: Cli) -> None:
    joined("send", "@frontend", "x", name="backend")
    sessions = json.loads(joined("who", "--json").out)
    assert [s["name"] for s in sessions] == ["backend", "frontend"]
    for key in ("name", "session_id", "state", "pane", "pid", "cwd", "unread", "parent"):
        assert all(key in s for s in sessions), key
    assert sessions[1]["unread"] == 1
    assert sessions[1]["pane"] == "%7"
    table = joined("who").out.splitlines()
    assert table[0].split()[:3] == ["NAME", "STATE", "AGENT"]


TEARDOWN = (
    "import atexit, sys; atexit.register(sys.stderr.write, 'teardown\\n');"
    " from agent_room.cli import main; main()"
)
"""A process running the command line that says so when the interpreter tears down."""


@pytest.mark.parametrize(
    ("command", "short"),
    [
        (("who",), True),
        (("history",), True),
        (("send", "@frontend", "hi"), True),
        (("tree",), False),
        (("inbox", "--peek"), False),
    ],
)
def test_short_commands_end_once_printed(
    joined: Cli, command: tuple[str, ...], short: bool
) -> None:
    """send, who and history end their process without the interpreter's teardown, and
    all they printed is written first."""
    proc = subprocess.run(
        [sys.executable, "-c", TEARDOWN, *command],
        capture_output=True, env=joined.env({"AGENT_ROOM_NAME": "backend"}), check=True,
    )  # fmt: skip
    assert (b"teardown" in proc.stderr) is not short, proc.stderr
    if command == ("who",):
        assert proc.stdout.decode().splitlines()[-1].startswith("frontend ")
    if command[0] == "send":
        assert proc.stdout.strip().isdigit()


def test_who_lists_the_clients_sessions_outside_the_room_below_its_members(
    cli: Cli, room: Room, tmp_path: Path
) -> None:
    """A session the client lists is outside the room unless a member has its id."""
    from agent_room.turn.procfs import read_stat

    room.store.register(
        {"session_id": "s-in", "state": "idle"},
        wanted="inside",
        explicit=True,
        at=room.clock(),
        alive=lambda *_: True,
    )
    sessions = tmp_path / "claude" / "sessions"
    sessions.mkdir(parents=True)
    recorded = json.loads((FIXTURES / "claude-native/snap-4-s2-permission/28534.json").read_text())
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        for proc, sid, name in zip(sleepers, ("s-in", "s-out"), ("in", "out"), strict=True):
            stat = read_stat(proc.pid)
            assert stat is not None
            entry = {**recorded, "pid": proc.pid, "sessionId": sid, "name": name}
            (sessions / f"{proc.pid}.json").write_text(
                json.dumps({**entry, "procStart": str(stat.start_ticks)})
            )
        result = cli("who", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")})
    finally:
        for proc in sleepers:
            proc.kill()
            proc.wait()
    assert result.code == 0, result.err
    members, outside = result.out.split("outside the room")
    assert members.splitlines()[1].startswith("inside ")
    assert "~out " in outside
    assert "~in " not in outside


def test_handover_approve_and_reject(joined: Cli) -> None:
    first = joined(
        "send",
        "@frontend",
        "--handover",
        "--changed",
        "GET /tasks",
        "--todo",
        "list view",
        "--files",
        "api/tasks.py",
        name="backend",
    )
    assert first.code == 0, first.err
    hid = first.out.strip()
    assert json.loads(joined("inbox", "--json", name="frontend").out) == []
    pending = json.loads(joined("handovers", "--json").out)
    assert [p["message_id"] for p in pending] == [int(hid)]
    assert joined("approve", f"#{hid}").code == 0
    got = joined("inbox", name="frontend").out
    assert "## Handover from backend" in got
    assert "- api/tasks.py" in got
    second = joined("send", "@frontend", "--handover", "take this", name="backend").out.strip()
    assert joined("reject", second, "--reason", "not now").code == 0
    notices = joined("inbox", name="backend").out
    assert "approved" in notices
    assert "rejected" in notices
    assert "Reason: not now" in notices
    assert joined("inbox", name="frontend").out == ""


@pytest.mark.parametrize(
    ("args", "stdin", "code", "fragments"),
    [
        (("send", "@nobody", "hi"), None, 2, ("@nobody", "@backend, @frontend")),
        (("send", "@../etc", "hi"), None, 2, ("invalid name", "path separators")),
        (("send", "@front end", "hi"), None, 2, ("spaces",)),
        (("send", "@" + "x" * 40, "hi"), None, 2, ("longer than 32",)),
        (("send", "@fr\x1bont", "hi"), None, 2, ("control characters",)),
        (("send", "@frontend", "   "), None, 2, ("empty",)),
        (("send", "@frontend"), "", 2, ("empty",)),
        (("send", "@frontend"), b"\xff\xfe bad", 2, ("UTF-8",)),
        (("send", "@frontend"), "a\x00b", 2, ("NUL",)),
        (("send", "@frontend"), "x" * (256 * 1024 + 1), 2, ("limit",)),
        (("send", "@frontend", "x", "--file", "/nonexistent"), None, 2, ("not both",)),
        (("send", "@frontend", "--file", "/nonexistent/x"), None, 2, ("cannot read",)),
        (("send", "@frontend", "--todo", "x", "y"), None, 2, ("need --handover",)),
        (("send", "@frontend", "--handover", "--todo", "x"), None, 2, ("--changed",)),
        (("send", "@backend", "me"), None, 2, ("yourself",)),
        (("send", "@all", "hi"), None, 2, ("reserved",)),
        (("approve", "abc"), None, 2, ("invalid id",)),
        (("approve", "999"), None, 1, ("no handover #999",)),
        (("reject", "1"), None, 2, ("--reason",)),
        (("history", "0"), None, 2, ("invalid count",)),
        (("join", "bad/name"), None, 2, ("path separators",)),
        (("join", "ok", "--pane", "ac-ok"), None, 2, ("invalid pane",)),
        (("leave", "ghost"), None, 1, ("@ghost is not in the room",)),
        (("frobnicate",), None, 2, ("invalid choice",)),
    ],
    ids=lambda value: "-".join(value)[:24] if isinstance(value, tuple) else f"{value!r}"[:12],
)
def test_error_paths(
    joined: Cli,
    args: tuple[str, ...],
    stdin: str | bytes | None,
    code: int,
    fragments: tuple[str, ...],
) -> None:
    before = joined("history", "100", "--json").out
    result = joined(*args, name="backend", stdin=stdin)
    one_line_error(result, code, *fragments)
    assert joined("history", "100", "--json").out == before  # nothing half-written


def test_unknown_identity_is_a_clear_error(joined: Cli) -> None:
    one_line_error(joined("inbox"), 2, "cannot tell who you are")
    one_line_error(joined("send", "@frontend", "x", "--as", "ghost"), 2, "@ghost")


@pytest.mark.sqlite
def test_unsafe_room_is_refused(cli: Cli) -> None:
    cli.home.mkdir(mode=0o700)
    cli.home.chmod(0o777)
    one_line_error(cli("who"), 1, "writable by others")


def test_help_lists_the_commands(cli: Cli) -> None:
    out = cli("--help").out
    for command in (
        "join",
        "leave",
        "send",
        "inbox",
        "history",
        "who",
        "approve",
        "reject",
        "tree",
        "watch",
        "start",
        "stop",
        "plugin",
        "demo",
    ):
        assert command in out


@pytest.mark.parametrize("command", ["send", "start", "stop", "watch", "plugin", "who"])
def test_each_command_has_its_own_help(cli: Cli, command: str) -> None:
    result = cli(command, "--help")
    assert result.code == 0
    assert result.out.lower().startswith(f"usage: agent-room {command}")


@pytest.mark.parametrize(
    "args",
    [
        ("@frontend", "plain", "words"),
        ("@frontend", "--as", "backend", "plain", "words"),
        ("@frontend", "plain", "--as=backend", "words"),
        ("frontend", "plain", "words"),
    ],
    ids=["words", "as-first", "as-equals", "no-at"],
)
def test_the_quick_send_path_means_what_the_parser_means(
    joined: Cli, args: tuple[str, ...]
) -> None:
    """``send @NAME WORDS`` is sent by the quick path; its result is the full path's
    (``cli.send.send_message``, reached with an option), to the byte: one parser reads both."""
    quick = joined("send", *args, "--as", "backend")
    full = joined("send", *args, "--as", "backend", "--handover")  # an option: full parser
    assert quick.code == 0
    assert full.code == 0
    history = json.loads(joined("history", "2", "--json").out)
    assert [(m["kind"], m["sender"], m["recipient"], m["body"]) for m in history] == [
        ("chat", "backend", "frontend", "plain words"),
        ("handover", "backend", "frontend", "plain words"),
    ]
    assert quick.err == (
        f"message #{history[0]['id']} queued for {args[0]}"
        " (no deliverer is running: see `agent-room watch`)\n"
    )
    assert quick.out == f"{history[0]['id']}\n"


@pytest.mark.sqlite
def test_the_quick_send_path_loads_no_argparse(joined: Cli) -> None:
    """Every delivery starts with a send: it loads neither argparse nor enum, re or json."""
    probe = (
        "import sys; from agent_room.cli import main; "
        "code = main(['send', '@frontend', 'hi', '--as', 'backend']); "
        "print(code, *(m in sys.modules for m in ('argparse', 'enum', 're', 'json')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, env=joined.env(), check=True
    )
    assert result.stdout.decode().splitlines()[-1] == "0 False False False False"


def test_the_send_paths_kind_is_the_enums() -> None:
    from agent_room.core.enums import MessageKind
    from agent_room.turn.room.service import CHAT

    assert CHAT == MessageKind.CHAT


def test_send_says_nothing_of_the_deliverer_while_one_listens(joined: Cli) -> None:
    from agent_room.workers.wakeup import WakeListener

    listener = WakeListener(str(joined.home))
    listener.bind()
    try:
        sent = joined("send", "@frontend", "hello", name="backend")
    finally:
        listener.close()
    assert sent.err.endswith("queued for @frontend\n")
