"""Claude Code's registry, ``agents --json`` and wire frames, replayed from the recordings
of 2.1.330 (tests/fixtures/claude-native)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent_room.adapters.claude_native import FileRegistry
from agent_room.core.native import (
    NativeSession,
    Outcome,
    Receipt,
    ReceiptKind,
    Route,
    SocketFacts,
    choose_route,
    idle_frame,
    native_refusal,
    outside,
    parse_agents_json,
    parse_entry,
    parse_receipt,
    receipt_outcome,
    room_name_for,
    user_frame,
)
from agent_room.turn.core.peer_prompt import parse_peer_prompt
from tests.conftest import FIXTURES

NATIVE = FIXTURES / "claude-native"
WIRE = [
    json.loads(line) for line in (NATIVE / "fake-recipient-wire.jsonl").read_text().splitlines()
]


def _entry(path: Path) -> NativeSession:
    found = parse_entry(json.loads(path.read_text()))
    assert found is not None
    return found


def test_registry_files_at_each_recorded_moment() -> None:
    idle = _entry(NATIVE / "snap-2-idle" / "28538.json")
    assert idle.status == "idle"
    assert idle.name == "worker-b"
    assert idle.pane == "%3"
    assert idle.socket == "/tmp/cc-socks/28538.sock"
    assert idle.peer_protocol == 1
    assert idle.proc_start == 116424
    assert idle.started_at == pytest.approx(1795260325.917)
    busy = _entry(NATIVE / "snap-3-s1-busy" / "28534.json")
    assert busy.status == "busy"
    waiting = _entry(NATIVE / "snap-4-s2-permission" / "28538.json")
    assert waiting.status_text == "waiting: permission prompt"
    background = _entry(NATIVE / "snap-5-bg" / "10049.json")
    assert background.kind == "background"
    assert background.job == "d5445817"
    assert background.pane is None


def test_agents_json_outputs() -> None:
    assert parse_agents_json((NATIVE / "agents-json-0.json").read_text()) == []
    sessions = parse_agents_json((NATIVE / "agents-json-with-bg.json").read_text())
    kinds = {s.kind for s in sessions}
    assert kinds == {"interactive", "background"}
    blocked = [s for s in sessions if s.job_state == "blocked"]
    assert blocked
    assert blocked[0].status_text.endswith(" (blocked)")
    snap = parse_agents_json((NATIVE / "snap-5-bg" / "agents.json").read_text())
    assert [s.name for s in snap][:2] == ["proj-94", "worker-b"]
    assert parse_agents_json("not json") == []
    assert parse_agents_json('{"pid": 1}') == []


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"pid": "x", "sessionId": "s", "cwd": "/"},
        {"pid": 0, "sessionId": "s", "cwd": "/"},
        {"pid": 5, "cwd": "/"},
        {"pid": 5, "sessionId": "s", "cwd": "/", "spare": True, "agent": "claude"},
        {"pid": 5, "sessionId": "s", "cwd": "/", "parkedJobId": "f8ac80b8"},
    ],
)
def test_what_is_not_a_session_to_show(data: object) -> None:
    assert parse_entry(data) is None


def test_a_stale_entry_and_a_reused_pid_are_not_listed(tmp_path: Path) -> None:
    root = tmp_path / "claude"
    shutil.copytree(NATIVE / "snap-5-bg", root / "sessions")
    shutil.copytree(NATIVE / "jobs", root / "jobs")

    class Probe:
        def is_alive(self, pid: int, start_ticks: int | None) -> bool:
            # 28534 died (its file survives a SIGKILL); 2440's pid now runs another process
            return pid not in (28534, 2440) and start_ticks is not None

    mine = os.getuid()
    found = FileRegistry(root, Probe(), owner=lambda pid: mine).sessions()
    assert {s.pid for s in found} == {28538, 7462, 10049}
    (background,) = [s for s in found if s.kind == "background"]
    state = json.loads((root / "jobs" / "d5445817" / "state.json").read_text())["state"]
    assert background.job_state == state  # from the job's state.json
    (root / "sessions" / "28538.json").write_text('{"pid": 28538, "sessionId": ')  # half-written
    assert 28538 not in {
        s.pid for s in FileRegistry(root, Probe(), owner=lambda pid: mine).sessions()
    }


def test_the_capability_check() -> None:
    idle = _entry(NATIVE / "snap-2-idle" / "28538.json")
    good = SocketFacts(is_socket=True, uid=0, mode=0o600, dir_uid=0, dir_mode=0o700)
    assert native_refusal(idle, good, 0) is None
    assert native_refusal(None, good, 0) is not None
    assert "no messaging socket" in str(native_refusal(parse_entry({**_raw(), "pid": 9}), good, 0))
    assert "gone" in str(native_refusal(idle, None, 0))
    assert "another user" in str(native_refusal(idle, good, 1000))
    open_ = SocketFacts(is_socket=True, uid=0, mode=0o666, dir_uid=0, dir_mode=0o700)
    assert "not private" in str(native_refusal(idle, open_, 0))
    file_ = SocketFacts(is_socket=False, uid=0, mode=0o600, dir_uid=0, dir_mode=0o700)
    assert "not a socket" in str(native_refusal(idle, file_, 0))
    newer = parse_entry({**json.loads((NATIVE / "snap-2-idle" / "28538.json").read_text()),
                         "peerProtocol": 2})  # fmt: skip
    assert "protocol 2" in str(native_refusal(newer, good, 0))


def _raw() -> dict[str, object]:
    data = json.loads((NATIVE / "snap-2-idle" / "28538.json").read_text())
    data.pop("messagingSocketPath")
    return dict(data)


def test_the_preference_chooses_the_route() -> None:
    assert choose_route("native-first", None) == (Route.NATIVE, "")
    assert choose_route("native-first", "no socket") == (Route.TMUX, "")
    assert choose_route("tmux", None) == (Route.TMUX, "")
    assert choose_route("native", "no socket") == (
        Route.HOLD,
        "native delivery only, and no socket",
    )
    assert choose_route("nonsense", None) == (Route.NATIVE, "")


def test_frames_have_the_shape_the_client_writes() -> None:
    recorded = next(w["json"] for w in WIRE if w.get("json", {}).get("type") == "user")
    frame = user_frame("m-1", "hello\nthere", from_socket="/tmp/cc-socks/7.sock")
    assert set(frame) == set(recorded)
    assert frame["priority"] == recorded["priority"]
    assert frame["from"] == "uds:/tmp/cc-socks/7.sock"
    wrapped = parse_peer_prompt(frame["message"]["content"])
    assert wrapped is not None
    assert wrapped.body == "hello\nthere"
    assert wrapped.name == "agent-room"
    assert wrapped.mode == "prompting"
    asked = next(w["json"] for w in WIRE if w.get("json", {}).get("action") == "notify_when_idle")
    assert set(idle_frame("m-2", from_socket="/s")) == set(asked)


def test_receipts_as_recorded() -> None:
    lines = [w["line"] for w in WIRE if "line" in w]
    found = [parse_receipt(line) for line in lines]
    statuses = [r.status for r in found if isinstance(r, Receipt) and r.kind is ReceiptKind.STATUS]
    assert statuses[:2] == ["held", "delivered"]
    idle = [r for r in found if isinstance(r, Receipt) and r.kind is ReceiptKind.IDLE]
    assert idle
    assert idle[0].orig_msg_id == "11111111-2222-4333-8444-555555555556"
    assert "auth" in found  # auth lines are skipped quietly
    held = next(r for r in found if isinstance(r, Receipt) and r.status == "held")
    assert held.sender_socket == "/tmp/cc-socks/2440.sock"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"not json", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"type":"user"}', "not a receipt"),
        (b'{"type":"control","msgV":2,"orig_msg_id":"a"}', "protocol version 2 unknown"),
        (b'{"type":"control","msgV":1}', "no orig_msg_id"),
        (b'{"type":"control","msgV":1,"orig_msg_id":"a","action":"rename"}', "not handled"),
        (
            b'{"type":"control","msgV":1,"orig_msg_id":"a","action":"peer_message_status",'
            b'"status":"lost"}',
            "unknown to the room",
        ),
    ],
)
def test_bad_receipts_are_ignored_with_the_reason(line: bytes, why: str) -> None:
    found = parse_receipt(line)
    assert isinstance(found, str)
    assert why in found


def test_each_native_status_maps_onto_the_rooms() -> None:
    assert receipt_outcome("held")[0] is Outcome.HOLD
    assert "permission-mode" in receipt_outcome("held")[1]
    assert receipt_outcome("delivered") == (Outcome.DELIVERED, "")
    assert receipt_outcome("denied")[0] is Outcome.FAIL
    assert receipt_outcome("expired")[0] is Outcome.FAIL
    assert receipt_outcome("dropped", "queue full")[1] == "dropped by its client (queue full)"
    assert receipt_outcome("refused")[0] is Outcome.FALLBACK
    refused = parse_receipt(
        b'{"type":"control","msgV":1,"orig_msg_id":"a","action":"peer_message_status",'
        b'"status":"expired","status_detail":"refused"}'
    )
    assert isinstance(refused, Receipt)
    assert refused.status == "refused"


def test_outside_rows_leave_members_out_and_say_how_to_bring_one_in() -> None:
    natives = [
        _entry(NATIVE / "snap-5-bg" / name) for name in ("28534.json", "28538.json", "10049.json")
    ]
    members = [{"session_id": natives[0].session_id, "pid": 28534, "state": "idle"}]
    rows = outside(natives, members, now=1795260700.0)
    assert [r["name"] for r in rows] == ["~worker-b", "~background task hello SLOW:5"]
    assert rows[0]["pane"] == "%3"
    assert rows[0]["outside"] is True
    assert rows[0]["bring_in"] == (
        "end it (/exit), then: agent-room start worker-b --cwd /home/dev/ccn/proj2"
        " -- --resume b8220c56-d5dd-46db-a341-746a21195aa9"
    )
    assert rows[1]["bring_in"].startswith("claude stop d5445817, then: agent-room start")
    assert room_name_for(natives[2]) == "background-task-hello-slow-5"
    twice = outside([natives[1], natives[1]], [], now=0.0)
    assert [r["name"] for r in twice] == ["~worker-b", "~worker-b#28538"]
