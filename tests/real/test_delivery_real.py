"""Delivery into a real Claude Code client: what its input line holds when a nudge comes."""

from __future__ import annotations

from tests.real.conftest import TURN, RealRoom


def test_a_half_typed_line_is_cleared_before_the_nudge(real: RealRoom) -> None:
    """An earlier nudge left unsubmitted in the input line is not prefixed to the next one
    (Claude Code 2.1.330 empties its line with ctrl+e ctrl+u)."""
    assert real.run("transport", "tmux").code == 0  # the typed nudge, not the client's socket
    real.start("frontend")
    stale = "[agent-room] 1 new message from @backend (#999)"
    real.server.cmd("send-keys", "-t", "=ac-frontend:", "-l", "--", stale)
    real.wait(lambda: stale in real.screen("frontend"), TURN, "frontend")
    room = real.open()
    try:
        room.join("backend")
        mid = room.send("backend", "frontend", "the contract is ready (body-5d1e)")
    finally:
        room.close()
    nudge = f"[agent-room] 1 new message from @backend (#{mid})"
    real.wait(lambda: real.seen.turns_showing("frontend", "body-5d1e"), TURN, "frontend")
    shown = next(s for s in real.seen.shown("frontend") if "body-5d1e" in s)
    assert nudge in shown
    assert "#999" not in shown  # the stale line went, it was not submitted with the nudge
    assert not any("#999" in s for s in real.seen.shown("frontend"))
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, "frontend")
    assert real.member("frontend")["unread"] == 0  # handed to the model: read
