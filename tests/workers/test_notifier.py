"""The notifier: what needs the operator reaches a recording command hook once, within the
rate limit; a failing channel is reported and the others go on."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from agent_room.adapters.reach import CommandChannel
from agent_room.core.attention import Alert, NotifyPolicy
from agent_room.room.service import Room, connect_long_lived
from agent_room.turn.store.sqlite import SqliteStore
from agent_room.workers.notifier import NOTIFIED, Notifier
from tests.conftest import Cli
from tests.ui.seed import AliveProbe


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed_room(room_home: Path, clock: Clock) -> Iterator[Room]:
    opened = Room(SqliteStore(room_home, open_postgres=connect_long_lived), clock=clock)
    yield opened
    opened.close()


def recorder(tmp_path: Path, *, exit_code: int = 0) -> tuple[list[str], Path]:
    """A command hook of the user's own that records what it is told (stdin, env)."""
    out = tmp_path / f"told-{exit_code}.jsonl"
    script = tmp_path / f"hook-{exit_code}.py"
    script.write_text(
        "import json, os, sys\n"
        "data = json.loads(sys.stdin.read())\n"
        "data['env_text'] = os.environ['AGENT_ROOM_ALERT_TEXT']\n"
        f"open({str(out)!r}, 'a').write(json.dumps(data) + '\\n')\n"
        f"sys.stderr.write('pager down')\nsys.exit({exit_code})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return [sys.executable, str(script)], out


def told(out: Path) -> list[dict[str, str]]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_handover_a_dialog_a_failure_and_a_message_reach_the_command_hook_once(
    timed_room: Room, clock: Clock, tmp_path: Path
) -> None:
    room = timed_room
    for name in ("api", "web", "mobile"):
        room.join(name)
    hid = room.send_handover("api", "web", body="Take the list view")
    room.store.conn.execute("UPDATE sessions SET session_id = 's-mobile' WHERE name = 'mobile'")
    room.store.set_state("s-mobile", "waiting", at=clock.now, reset_blocks=False)
    mid = room.send("web", "api", "hello")
    room.store.conn.execute("UPDATE messages SET status = 'failed' WHERE id = $1", (mid,))
    asked = room.send("api", "operator", "Which schema do you want?\nDetails follow.")
    argv, out = recorder(tmp_path)
    notifier = Notifier(
        room, AliveProbe(), [CommandChannel(argv)], policy=NotifyPolicy(permission_after=30.0),
        use_lease=False,
    )  # fmt: skip

    notifier.run_once()
    kinds = [t["kind"] for t in told(out)]
    assert kinds == ["handover", "failed", "message"]  # the dialog is 0 s old: not yet
    by_kind = {t["kind"]: t for t in told(out)}
    assert by_kind["handover"]["key"] == f"handover:{hid}"
    assert f"agent-room approve {hid}" in by_kind["handover"]["text"]
    assert by_kind["message"]["text"].startswith("@api writes to you: Which schema do you want?")
    assert by_kind["message"]["env_text"] == by_kind["message"]["text"]
    assert f"message:{asked}" == by_kind["message"]["key"]

    clock.now += 31
    notifier.run_once()
    assert [t["kind"] for t in told(out)][3:] == ["permission"]
    assert "@mobile has waited in a permission dialog for 31 s" in told(out)[3]["text"]

    clock.now += 5
    assert notifier.run_once() == []  # nothing new: nothing told twice
    events = room.store.conn.execute(
        "SELECT count(*) FROM events WHERE kind = $1", (NOTIFIED,)
    ).fetchone()[0]
    assert events == 4

    # a notifier that takes over (another console, a restart) knows what was told
    again = Notifier(room, AliveProbe(), [CommandChannel(argv)], use_lease=False)
    assert again.run_once() == []
    assert len(told(out)) == 4


def test_past_the_rate_limit_the_rest_follow_a_minute_later(
    timed_room: Room, clock: Clock, tmp_path: Path
) -> None:
    room = timed_room
    room.join("api")
    room.join("web")
    for i in range(8):
        room.send_handover("api", "web", body=f"piece {i}")
    argv, out = recorder(tmp_path)
    notifier = Notifier(
        room, AliveProbe(), [CommandChannel(argv)], policy=NotifyPolicy(per_minute=6),
        use_lease=False,
    )  # fmt: skip
    notifier.run_once()
    assert len(told(out)) == 6
    clock.now += 30
    notifier.run_once()
    assert len(told(out)) == 6
    clock.now += 31
    notifier.run_once()
    assert len(told(out)) == 8


class Recording:
    name = "recording"

    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    def available(self) -> str | None:
        return None

    def send(self, alerts: Sequence[Alert]) -> None:
        self.alerts.extend(alerts)


def test_a_failing_channel_is_reported_once_and_the_others_still_hear(
    timed_room: Room, clock: Clock, tmp_path: Path
) -> None:
    room = timed_room
    room.join("api")
    room.join("web")
    room.send_handover("api", "web", body="one")
    argv, _out = recorder(tmp_path, exit_code=3)
    problems: list[tuple[str, str | None]] = []
    recording = Recording()
    notifier = Notifier(
        room, AliveProbe(), [CommandChannel(argv), recording], use_lease=False,
        on_problem=lambda channel, problem: problems.append((channel, problem)),
    )  # fmt: skip
    notifier.run_once()
    room.send_handover("api", "web", body="two")
    notifier.run_once()
    assert [a.kind for a in recording.alerts] == ["handover", "handover"]
    assert problems == [("command", "RuntimeError: the notify command exited 3: pager down")]


def test_an_unknown_channel_in_the_settings_file_is_one_line(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "config" / "agent-room"
    config.mkdir(parents=True)
    (config / "console.toml").write_text('[notify]\nchannels = ["tmux", "pager"]\n')
    result = cli("notify", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert result.code != 0
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "console.toml: notify.channels.1:" in lines[0]
    assert "'tmux', 'desktop' or 'command'" in lines[0]
    watch = cli("watch", env={"XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert watch.code != 0
    assert watch.err.strip() == lines[0]


def test_the_desktop_channel_runs_notify_send_with_the_text_as_one_escaped_argument(
    tmp_path: Path,
) -> None:
    from agent_room.adapters.reach import DesktopChannel

    out = tmp_path / "argv.json"
    fake = tmp_path / "notify-send"
    fake.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    channel = DesktopChannel(str(fake))
    assert channel.available() is None
    channel.send([Alert("k", "message", "api", "@api writes to you: \x1b]0;pwned\x07 -rf")])
    assert json.loads(out.read_text()) == [
        "--app-name=agent-room",
        "--",
        "agent-room: message",
        "@api writes to you: \\x1b]0;pwned\\x07 -rf",
    ]
    assert DesktopChannel(str(tmp_path / "missing")).available() is not None
