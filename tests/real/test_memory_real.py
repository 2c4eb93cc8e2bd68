"""The room's memory with real Claude Code agents: a handover carries what its sender did,
and a checkpoint resumed into a new session reaches that session's model."""

from __future__ import annotations

from agent_room.demo.model_api import Reply, Script
from tests.real.conftest import STARTUP, TURN, RealRoom
from tests.real.model import everything


def _pending(real: RealRoom) -> list[dict[str, object]]:
    return real.rows("handovers")


def _context(real: RealRoom, handover: int) -> str:
    from agent_room.store import memory

    room = real.open()
    try:
        row = memory.context(room.store, handover)
    finally:
        room.close()
    return str(row["text"]) if row else ""


def test_a_handover_carries_the_file_its_sender_edited(real: RealRoom, script: Script) -> None:
    edited = real.root / "backend" / "cart_totals_9d2.py"
    script.add("EDIT-CART", Reply("Writing it.", write=(str(edited), "TOTAL = 0\n")))
    script.add(
        "HANDOVER-CART",
        Reply(
            bash='agent-room send @frontend --handover --changed "cart totals moved"'
            ' --todo "show the cart totals" --contract "cart_totals_9d2 TOTAL"'
        ),
    )
    real.start("backend", "frontend", args=["--permission-mode", "acceptEdits"])

    real.type("backend", "EDIT-CART: write the cart totals module")
    real.wait(edited.exists, TURN, "backend")
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, "backend")
    real.type("backend", "HANDOVER-CART: hand the cart view over")
    real.wait(lambda: len(_pending(real)) == 1, TURN, "backend", "frontend")
    handover = int(str(_pending(real)[0]["message_id"]))
    # the memory worker inside `watch` prepares the context before anyone approves
    real.wait(lambda: str(edited) in _context(real, handover), TURN, "backend")

    assert real.run("approve", str(handover)).code == 0
    real.wait(lambda: real.seen.turns_showing("frontend", str(edited)), TURN, "frontend")
    shown = next(s for s in real.seen.shown("frontend") if str(edited) in s)
    assert "## Context from @backend's session" in shown
    assert "### Files changed" in shown


def test_a_checkpoint_resumed_into_a_new_session_reaches_its_model(
    real: RealRoom, script: Script
) -> None:
    script.add("NOTE-IT", Reply("Noted: the ledger closes at 5 (memo-4b7)."))
    real.start("backend")
    real.type("backend", "NOTE-IT: remember when the ledger closes")
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, "backend")
    taken = real.run("checkpoint", "backend", "--note", "before lunch")
    assert taken.code == 0, taken.err

    resumed = real.run("resume", "backend", "--mode", "partial", "--name", "backend2", "--detach")
    assert resumed.code == 0, resumed.err
    real.wait(lambda: real.member("backend2").get("state") == "idle", STARTUP, "backend2")
    real.type("backend2", "CONTINUE: where were we?")
    real.wait(lambda: real.seen.bodies("backend2"), TURN, "backend2")
    body = everything(real.seen.bodies("backend2")[-1])
    assert "## Resuming @backend from checkpoint #" in body
    assert "Note: before lunch" in body
    assert "memo-4b7" in body
