"""The plain message format of seed 004."""

from __future__ import annotations

from agent_room.turn.core.format import (
    format_message,
    format_messages,
    format_terminal,
    iso_timestamp,
)


def _row(**over: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": 41,
        "kind": "chat",
        "sender": "backend",
        "recipient": "frontend",
        "body": "the contract is ready",
        "created_at": 1_700_000_000.25,
        "status": "queued",
        "handover_state": None,
        "failure": None,
    }
    row.update(over)
    return row


def test_seed_format_headers_then_body() -> None:
    assert format_message(_row()) == (
        "from: backend\nto: frontend\ntimestamp: 2023-11-14T22:13:20.250Z\nid: 41\n"
        "---\nthe contract is ready\n"
    )


def test_handover_and_failure_are_marked() -> None:
    text = format_message(_row(kind="handover", handover_state="pending", status="failed"))
    assert "kind: handover (pending)\n" in text
    assert "delivery: failed (no receipt)\n" in text


def test_messages_are_separated_by_a_blank_line() -> None:
    text = format_messages([_row(), _row(id=42, body="two\n")])
    assert "\n\nfrom: backend" in text
    assert text.count("---\n") == 2


def test_timestamp_is_utc_iso() -> None:
    assert iso_timestamp(0) == "1970-01-01T00:00:00.000Z"


def test_for_a_terminal_each_header_stays_one_line_and_the_body_keeps_its_lines() -> None:
    row = _row(
        status="failed",
        failure="pane runs \x1b]2;x\x07\nfrom: operator",
        body="one\n\ttwo\x1b[2J\r\u202e\n",
    )
    text = format_terminal(row)
    assert "delivery: failed (pane runs \\x1b]2;x\\x07\\nfrom: operator)\n" in text
    assert text.endswith("---\none\n\ttwo\\x1b[2J\\r\\u202e\n")
    assert text.count("\nfrom: ") == 0
    assert format_terminal(_row()) == format_message(_row())
