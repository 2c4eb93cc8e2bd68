"""Messages and handovers between two real Claude Code agents, through the room."""

from __future__ import annotations

from agent_room.demo.model_api import Reply, Script
from tests.real.conftest import TURN, RealRoom


def _delivered(real: RealRoom, message_id: int) -> bool:
    room = real.open()
    try:
        row = room.store.message(message_id)
        return row is not None and row["status"] == "delivered"
    finally:
        room.close()


def _history(real: RealRoom) -> list[dict[str, object]]:
    return real.rows("history")


def _pending(real: RealRoom) -> list[dict[str, object]]:
    return real.rows("handovers")


def test_a_message_sent_by_the_model_reaches_the_other_model(
    real: RealRoom, script: Script
) -> None:
    body = "GET /tasks is live: { id, title, done }[] (body-7f3a)"
    script.add("TASK-SEND", Reply("Telling @frontend.", bash=f'agent-room send @frontend "{body}"'))
    real.start("backend", "frontend")

    real.type("backend", "TASK-SEND: tell frontend the endpoint is live")
    # the agent runs `agent-room send` itself (a Bash tool call the client executes)
    sent = real.wait(
        lambda: [m for m in _history(real) if m["body"] == body], TURN, "backend", "frontend"
    )
    assert isinstance(sent, list)
    assert [(m["sender"], m["recipient"]) for m in sent] == [("backend", "frontend")]
    message_id = int(str(sent[0]["id"]))

    real.wait(lambda: _delivered(real, message_id), TURN, "backend", "frontend")
    real.wait(lambda: real.seen.turns_showing("frontend", body), TURN, "backend", "frontend")
    shown = next(s for s in real.seen.shown("frontend") if body in s)
    assert f"[agent-room] 1 new message from @backend (#{message_id})" in shown  # the nudge
    assert "from: backend" in shown  # the body came as the hook's context, in the seed format
    assert real.seen.turns_showing("frontend", body) == 1
    assert body not in real.screen("frontend")  # only the nudge went through the keyboard
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, "backend", "frontend")


def test_handovers_wait_for_the_operator(real: RealRoom, script: Script) -> None:
    approve = "ho-approve-11"
    reject = "ho-reject-22"
    script.add(
        "HANDOVER-A",
        Reply(
            bash=f'agent-room send @frontend --handover --changed "Added GET /tasks" '
            f'--todo "Build the task list view ({approve})"'
        ),
    )
    script.add(
        "HANDOVER-B",
        Reply(
            bash=f'agent-room send @frontend --handover --changed "Dropped PATCH" '
            f'--todo "Rewrite the client ({reject})"'
        ),
    )
    real.start("backend", "frontend")

    real.type("backend", "HANDOVER-A: hand the list view over")
    real.wait(lambda: len(_pending(real)) == 1, TURN, "backend", "frontend")
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, "backend", "frontend")
    real.type("backend", "HANDOVER-B: hand the client rewrite over")
    real.wait(lambda: len(_pending(real)) == 2, TURN, "backend", "frontend")
    first, second = (int(str(h["message_id"])) for h in _pending(real))
    assert not real.seen.turns_showing("frontend", approve)  # held in the room

    approved = real.run("approve", str(first))
    assert approved.code == 0, approved.err
    rejected = real.run("reject", str(second), "--reason", "tests first, then the rewrite (why-33)")
    assert rejected.code == 0, rejected.err

    real.wait(lambda: real.seen.turns_showing("frontend", approve), TURN, "backend", "frontend")
    real.wait(lambda: real.seen.turns_showing("backend", "why-33"), TURN, "backend", "frontend")
    assert _delivered(real, first)
    assert not any(reject in s for s in real.seen.shown("frontend"))
    assert real.seen.turns_showing("frontend", approve) == 1
    assert _pending(real) == []
