"""``agent-room status``, ``@operator`` from the command line, and the tmux.conf lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_room.room.service import Room
from tests.conftest import Cli


def test_status_prints_one_line_for_the_status_bar(cli: Cli, room: Room) -> None:
    room.join("api")
    room.join("web")
    room.send_handover("api", "web", body="Take it")
    room.send("api", "operator", "a question")
    assert cli("status").out == "⚑1 ⏸0 ✗0\n"
    fmt = cli("status", "--format", "H{handovers} M{messages} F{frozen}")
    assert fmt.out == "H1 M1 F0\n"
    assert cli("status", "--format=#{handovers}").out == "#1\n"


@pytest.mark.sqlite
def test_status_in_no_room_yet_prints_an_empty_rooms_line_and_makes_none(
    cli: Cli, room_home: Path
) -> None:
    assert cli("status").out == "⚑0 ⏸0 ✗0\n"
    assert not room_home.exists()


@pytest.mark.sqlite
def test_a_status_format_with_an_unknown_field_is_one_line_and_touches_nothing(
    cli: Cli, room_home: Path
) -> None:
    result = cli("status", "--format", "{handovers} {pending}")
    assert result.code == 2
    assert result.out == ""
    assert result.err == (
        "agent-room: unknown field {pending} in the status format: use {handovers},"
        " {waiting}, {failed}, {frozen}, {messages}\n"
    )
    assert not room_home.exists()  # checked before the room is opened


def test_the_operator_writes_without_a_pane_and_agents_write_to_the_operator(
    cli: Cli, room: Room
) -> None:
    room.join("api")
    sent = cli("send", "@api", "Please pause the migration", "--as", "operator")
    assert sent.code == 0, sent.err
    inbox = json.loads(cli("inbox", "--json", name="api").out)
    assert [(m["sender"], m["body"]) for m in inbox] == [("operator", "Please pause the migration")]

    asked = cli("send", "@operator", "Paused. Resume when?", name="api")
    assert asked.code == 0, asked.err
    assert "left for the operator" in asked.err
    assert cli("status", "--format", "{messages}").out == "1\n"
    mine = json.loads(cli("inbox", "--as", "operator", "--json").out)
    assert [(m["sender"], m["body"]) for m in mine] == [("api", "Paused. Resume when?")]
    assert cli("status", "--format", "{messages}").out == "0\n"  # read


def test_operator_stays_a_reserved_name(cli: Cli, room: Room) -> None:
    result = cli("join", "operator")
    assert result.code == 2
    assert "reserved" in result.err
    wrong = cli("send", "@nobody", "hi", "--as", "operator")
    assert wrong.code != 0
    assert "nobody named @nobody" in wrong.err


def test_install_keys_is_reversible_and_idempotent(cli: Cli, tmp_path: Path) -> None:
    conf = tmp_path / "tmux.conf"
    original = "set -g mouse on\nbind r source-file ~/.tmux.conf\n"
    conf.write_text(original)
    conf.chmod(0o600)
    assert cli("tmux", "install-keys", "--file", str(conf)).code == 0
    once = conf.read_text()
    assert once.startswith(original)
    assert "#(" in once
    assert "agent_room status" in once
    assert "bind-key A display-popup" in once
    assert cli("tmux", "install-keys", "--file", str(conf), "--key", "C-a").code == 0
    twice = conf.read_text()
    assert twice.count("display-popup") == 1
    assert "bind-key C-a" in twice
    assert conf.stat().st_mode & 0o777 == 0o600
    assert cli("tmux", "remove-keys", "--file", str(conf)).code == 0
    assert conf.read_text() == original
    bad = cli("tmux", "keys", "--key", "A; run-shell rm")
    assert bad.code == 2
    assert bad.err.startswith("agent-room: invalid key")


def test_serve_refuses_a_port_in_use_and_a_weak_token_in_one_line(cli: Cli) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = cli("serve", "--port", port)
    assert busy.code == 2
    assert (
        busy.err == f"agent-room: port {port} on 127.0.0.1 is in use: choose another with --port\n"
    )
    weak = cli("serve", "--port", port, env={"AGENT_ROOM_SERVE_TOKEN": "short"})
    assert weak.code == 2
    assert weak.err.startswith("agent-room: AGENT_ROOM_SERVE_TOKEN is too weak")
    assert "short" not in weak.err
    bad = cli("serve", "--port", "70000")
    assert bad.code == 2
    assert "invalid port" in bad.err


def test_the_served_console_needs_a_token_on_every_address() -> None:
    """Loopback too: other users of the machine and other sites' pages reach it."""
    from agent_room.cli.serve import serve_token

    made, printed = serve_token({})
    assert printed
    assert len(made) >= 16
    assert serve_token({})[0] != made
    given = "x" * 20
    assert serve_token({"AGENT_ROOM_SERVE_TOKEN": given}) == (given, False)


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8760", True),
        ("localhost:9000", True),  # an SSH tunnel's other local port
        ("[::1]:8760", True),
        ("192.168.1.20:8760", True),
        ("room.example.com", True),  # allowed by --allow-host
        ("evil.example:8760", False),  # a rebound name
        ("localhost.evil.example", False),
        ("", False),
    ],
)
def test_the_served_console_answers_ip_addresses_localhost_and_allowed_names(
    host: str, allowed: bool
) -> None:
    from agent_room.adapters.web import host_allowed

    assert host_allowed(host, ["room.example.com"]) is allowed


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # a navigation: no Origin sent
        ("http://127.0.0.1:8760", True),
        ("https://127.0.0.1:8760", True),  # behind a proxy with TLS
        ("http://127.0.0.1:9999", False),  # another port: another origin
        ("http://evil.example", False),
        ("null", False),
    ],
)
def test_only_the_pages_own_origin_passes(origin: str | None, allowed: bool) -> None:
    from agent_room.adapters.web import origin_allowed

    assert origin_allowed(origin, "127.0.0.1:8760") is allowed
