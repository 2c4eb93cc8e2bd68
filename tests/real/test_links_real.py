"""A link between two real Claude Code agents: turns cross both ways, checkpoints stay home."""

from __future__ import annotations

from typing import Any

from agent_room.demo.model_api import Reply, Script
from agent_room.room.views import audit_events
from tests.real.conftest import TURN, RealRoom

ASK = "Which fields does the task list need? (q-71)"
ANSWER = "The list view needs id, title and done for each task (ans-72)."
THANKS = "Thanks: GET /tasks now returns id, title and done (back-73)."
CHECKPOINT = "[agent-room checkpoint] note where you are (cp-74)"
PRIVATE = "Checkpoint notes: schema work half done, tests pending (secret-75)."


def _links(real: RealRoom) -> list[dict[str, Any]]:
    return real.rows("links")


def _skipped(real: RealRoom, outcome: str) -> int:
    room = real.open()
    try:
        return sum(
            1
            for e in audit_events(room)
            if e.kind == "link.skipped" and e.data["outcome"] == outcome
        )
    finally:
        room.close()


def test_a_link_carries_one_exchange_each_way_and_a_checkpoint_stays_private(
    real: RealRoom, script: Script
) -> None:
    script.add(
        "LINK-OPEN", Reply("Asking @frontend.", bash=f'agent-room send @frontend "{ASK}" --link')
    )
    script.add("q-71", Reply(ANSWER))
    script.add("ans-72", Reply(THANKS))
    script.add("cp-74", Reply(PRIVATE))
    real.start("backend", "frontend")
    both = ("backend", "frontend")

    real.type("backend", "LINK-OPEN: ask frontend what the list needs")
    real.wait(lambda: _links(real), TURN, *both)
    ((link,),) = [_links(real)]
    assert (link["initiator"], link["responder"], link["state"]) == ("backend", "frontend", "open")

    # frontend answers the linked message; its final output crosses back, framed
    real.wait(lambda: real.seen.turns_showing("frontend", "q-71"), TURN, *both)
    real.wait(lambda: real.seen.turns_showing("backend", f"[From @frontend] {ANSWER}"), TURN, *both)
    # backend's next final output crosses to frontend
    real.wait(lambda: real.seen.turns_showing("frontend", f"[From @backend] {THANKS}"), TURN, *both)
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, *both)
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, *both)
    (after_exchange,) = _links(real)
    assert after_exchange["state"] == "open"
    # counted from the budget: the first read of the link may come after the answer crossed
    assert after_exchange["crossings_left"] <= link["budget"] - 2

    # a checkpoint turn: the model answers, the answer stays with backend
    real.type("backend", CHECKPOINT)
    real.wait(lambda: _skipped(real, "checkpoint") == 1, TURN, *both)
    real.wait(lambda: real.member("backend")["state"] == "idle", TURN, *both)
    assert real.seen.turns_showing("backend", "cp-74") == 1
    assert not any("secret-75" in shown for shown in real.seen.shown("frontend"))
    assert real.seen.turns_showing("frontend", "cp-74") == 0
    (after_checkpoint,) = _links(real)
    assert after_checkpoint["crossings_left"] == after_exchange["crossings_left"]
    assert after_checkpoint["state"] == "open"
    assert real.seen.turns_showing("backend", f"[From @frontend] {ANSWER}") == 1
    assert real.seen.turns_showing("frontend", f"[From @backend] {THANKS}") == 1
