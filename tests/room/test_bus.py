"""The room service: directed messages, inbox, history, handovers and the audit log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_room.core.enums import DeliveryStatus
from agent_room.core.handover import HandoverFields
from agent_room.core.models import AuditEvent, Message, Session
from agent_room.room.service import Room
from agent_room.room.views import audit_events, message_views, session_views
from agent_room.turn.core.errors import BadInput, NotFound, Refused, UnknownName
from agent_room.turn.store.sqlite import SqliteStore


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def pair(room_home: Path, clock: FakeClock) -> Room:
    room = Room(SqliteStore(room_home), clock=clock)
    room.join("backend")
    room.join("frontend", pane="%3")
    return room


def test_message_reaches_only_its_recipient(pair: Room) -> None:
    pair.join("mobile")
    mid = pair.send("backend", "@frontend", "contract ready")
    assert [r["id"] for r in pair.inbox("frontend", peek=True)] == [mid]
    assert pair.inbox("mobile") == []
    assert pair.inbox("backend") == []


def test_inbox_marks_read_unless_peek(pair: Room) -> None:
    pair.send("backend", "frontend", "one")
    pair.send("backend", "frontend", "two")
    assert [r["body"] for r in pair.inbox("frontend", peek=True)] == ["one", "two"]
    assert [r["body"] for r in pair.inbox("frontend")] == ["one", "two"]
    assert pair.inbox("frontend") == []
    assert [m.status for m in message_views(pair)] == [DeliveryStatus.READ] * 2


def test_history_is_the_last_n_in_order(pair: Room) -> None:
    ids = [pair.send("backend", "frontend", f"m{i}") for i in range(30)]
    assert [r["id"] for r in pair.history(5)] == ids[-5:]
    assert len(pair.history()) == 20
    with pytest.raises(BadInput):
        pair.history(0)


def test_unknown_recipient_names_who_is_here(pair: Room) -> None:
    with pytest.raises(UnknownName, match=r"@nobody .*@backend, @frontend"):
        pair.send("backend", "nobody", "hello")


def test_unknown_sender_and_self_messages_are_refused(pair: Room) -> None:
    with pytest.raises(UnknownName):
        pair.send("ghost", "frontend", "boo")
    with pytest.raises(BadInput, match="yourself"):
        pair.send("backend", "backend", "echo")


def test_no_broadcast_name_exists(pair: Room) -> None:
    for everyone in ("all", "everyone", "@all"):
        with pytest.raises(BadInput, match="reserved"):
            pair.send("backend", everyone, "hello all")


def test_identity_order_env_then_pane_then_as(pair: Room) -> None:
    assert pair.identify(env_name="backend", pane="%3", as_name=None) == "backend"
    assert pair.identify(env_name="backend", pane="%3", as_name="backend") == "backend"
    with pytest.raises(BadInput, match="disagrees with AGENT_ROOM_NAME"):
        pair.identify(env_name="backend", pane="%3", as_name="x")
    assert pair.identify(env_name=None, pane="%3", as_name="backend") == "frontend"
    assert pair.identify(env_name=None, pane="%99", as_name="backend") == "backend"
    with pytest.raises(BadInput, match="who you are"):
        pair.identify(env_name=None, pane=None, as_name=None)


def test_leave_and_rejoin_keep_history(pair: Room) -> None:
    pair.send("backend", "frontend", "while you were here")
    pair.leave("frontend")
    with pytest.raises(UnknownName):
        pair.send("backend", "frontend", "gone")
    with pytest.raises(NotFound):
        pair.leave("frontend")
    pair.join("frontend")
    assert [r["body"] for r in pair.inbox("frontend")] == ["while you were here"]


def _handover(room: Room) -> int:
    return room.send_handover(
        "backend", "frontend", fields=HandoverFields(what_changed="GET /tasks", what_to_do="UI")
    )


def test_handover_is_held_until_approved(pair: Room) -> None:
    hid = _handover(pair)
    assert pair.inbox("frontend", peek=True) == []
    assert [r["message_id"] for r in pair.pending_handovers()] == [hid]
    pair.approve(hid)
    inbox = pair.inbox("frontend")
    assert [r["id"] for r in inbox] == [hid]
    assert inbox[0]["handover_state"] == "approved"
    notice = pair.inbox("backend")
    assert notice[0]["kind"] == "system"
    assert "approved" in notice[0]["body"]
    assert pair.pending_handovers() == []


def test_rejected_handover_returns_its_reason_and_never_arrives(pair: Room) -> None:
    hid = _handover(pair)
    with pytest.raises(BadInput, match="reason"):
        pair.reject(hid, "  ")
    pair.reject(hid, "contract not final")
    assert pair.inbox("frontend") == []
    (notice,) = pair.inbox("backend")
    assert notice["sender"] == "room"
    assert "rejected" in notice["body"]
    assert "Reason: contract not final" in notice["body"]


def test_decided_handover_cannot_move_again(pair: Room) -> None:
    hid = _handover(pair)
    pair.approve(hid)
    with pytest.raises(Refused, match="approved"):
        pair.reject(hid, "too late")
    with pytest.raises(Refused):
        pair.approve(hid)
    with pytest.raises(NotFound):
        pair.approve(9999)
    chat = pair.send("backend", "frontend", "plain")
    with pytest.raises(NotFound):
        pair.approve(chat)


def test_handover_expires_and_sender_is_told(pair: Room, clock: FakeClock) -> None:
    hid = _handover(pair)
    clock.now += pair.handover_ttl + 1
    assert pair.pending_handovers() == []
    with pytest.raises(Refused, match="expired"):
        pair.approve(hid)
    (notice,) = pair.inbox("backend")
    assert "expired" in notice["body"]
    assert pair.inbox("frontend") == []


def test_freeform_handover_keeps_the_body(pair: Room) -> None:
    hid = pair.send_handover("backend", "frontend", body="## Handover from backend\nall yours")
    pair.approve(hid)
    assert pair.inbox("frontend")[0]["body"].endswith("all yours")


def test_every_change_is_in_the_audit_log(pair: Room) -> None:
    hid = _handover(pair)
    pair.reject(hid, "no")
    pair.send("backend", "frontend", "x")
    pair.inbox("frontend")
    kinds = [e.kind for e in audit_events(pair)]
    assert kinds == [
        "session.joined",
        "session.joined",
        "message.sent",
        "handover.requested",
        "handover.rejected",
        "message.sent",
        "message.sent",
        "message.read",
    ]
    assert all(isinstance(e, AuditEvent) for e in audit_events(pair))


def test_audit_log_is_append_only(pair: Room) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        pair.store.conn.execute("UPDATE events SET kind = 'x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        pair.store.conn.execute("DELETE FROM events")


def test_rows_validate_as_models(pair: Room) -> None:
    pair.send("backend", "frontend", "typed")
    (message,) = message_views(pair)
    assert isinstance(message, Message)
    assert message.body == "typed"
    sessions = session_views(pair)
    assert [s.name for s in sessions] == ["backend", "frontend"]
    assert all(isinstance(s, Session) for s in sessions)
    assert sessions[1].unread == 1


def test_bad_pane_is_refused(pair: Room) -> None:
    with pytest.raises(BadInput, match="pane"):
        pair.join("mobile", pane="ac-mobile")
