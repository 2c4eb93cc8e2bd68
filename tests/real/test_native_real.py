"""Claude Code's own registry and messaging socket, with the real clients (2.1.330, and
2.1.197, which has no socket)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_room.demo.model_api import Reply, Script
from tests.conftest import REPO, require_tool
from tests.poll import poll, wait_for
from tests.real.conftest import PROMPT, TURN, RealRoom

OLD_CLAUDE = REPO / ".tools" / "claude-code-2.1.197" / "node_modules" / ".bin" / "claude"
"""The last pinned client without the messaging socket (``.ci/setup`` installs it)."""


def _message(real: RealRoom, message_id: int) -> dict[str, object]:
    room = real.open()
    try:
        row = room.store.message(message_id)
    finally:
        room.close()
    assert row is not None
    return row


def _send(real: RealRoom, sender: str, recipient: str, body: str) -> int:
    room = real.open()
    try:
        room.join(sender)
        return room.send(sender, recipient, body)
    finally:
        room.close()


def _history(real: RealRoom) -> list[dict[str, object]]:
    return real.rows("history", "50")


def _listed(registry: Path, cwd: Path) -> bool:
    """Whether the client has written a whole entry for its session in ``cwd``, under the
    name it was given (it first writes a derived name, ``<folder>-NN``, then ``--name``)."""
    for path in registry.glob("*.json"):
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # being written
        if (
            isinstance(entry, dict)
            and entry.get("sessionId")
            and entry.get("cwd") == str(cwd)
            and entry.get("name") == cwd.name
        ):
            return True
    return False


def test_a_session_without_the_plugin_is_in_who_as_soon_as_its_client_lists_it(
    real: RealRoom,
) -> None:
    """The very next ``who`` after the client's own registry lists the session shows it:
    no scan to wait for (a condition, not a timing: a loaded machine cannot break it)."""
    real.start("frontend", plain=("scratch",))
    registry = real.home / ".claude" / "sessions"
    real.wait(lambda: _listed(registry, real.root / "scratch"), TURN, "scratch")
    row = real.who()["~scratch"]
    assert row["outside"] is True
    assert row["state"] == "idle"
    assert row["native_status"] == "idle"
    assert row["pane"] == real.pane("scratch").pane_id
    assert row["cwd"] == str(real.root / "scratch")
    assert "agent-room start scratch" in str(row["bring_in"])
    assert "outside" not in real.who()["frontend"]  # the plugin session is in the room
    table = real.run("who")
    assert "outside the room" in table.out
    assert "~scratch" in table.out
    assert "--resume" in table.err
    tree = real.run("tree")
    assert "~scratch (outside the room, idle)" in tree.out


def test_a_message_goes_through_the_socket_with_nothing_typed(real: RealRoom) -> None:
    real.start("frontend")
    message_id = _send(real, "backend", "frontend", "the schema moved (body-a41c)")
    nudge = f"[agent-room] 1 new message from @backend (#{message_id})"
    real.wait(lambda: real.seen.turns_showing("frontend", "body-a41c"), TURN, "frontend")
    real.wait(lambda: _message(real, message_id)["status"] == "delivered", TURN, "frontend")
    assert _message(real, message_id)["via"] == "native"
    shown = next(s for s in real.seen.shown("frontend") if "body-a41c" in s)
    assert "<cross-session-message" in shown  # the client's peer turn
    assert nudge in shown
    screen = real.screen("frontend")
    assert f"{PROMPT} {nudge}" not in screen  # never typed at the prompt
    assert "Message from @agent-room" in screen or "agent-room" in screen
    room = real.open()
    try:
        kinds = [e["kind"] for e in room.store.events(limit=5000)]
    finally:
        room.close()
    assert "delivery.native" in kinds
    real.wait(lambda: real.member("frontend")["unread"] == 0, TURN, "frontend")
    # the client sends no receipt for a message it takes at once (2.1.330 answers only a
    # hold and what follows one): the recipient's hook is the receipt
    time.sleep(1.0)
    assert _native_statuses(real) == [None]
    # the room never asks to be told when the session is idle: no notice of it is shown
    # to the agent or kept in its transcript
    transcript = Path(str(real.member("frontend")["transcript_path"]))
    assert "asked to be told" not in transcript.read_text()
    assert "asked to be told" not in real.screen("frontend")


def _native_statuses(real: RealRoom) -> list[object]:
    room = real.open()
    try:
        return [r[0] for r in room.store.conn.execute("SELECT status FROM native_sends")]
    finally:
        room.close()


def test_a_session_in_bypass_mode_holds_the_message_and_the_room_says_why(
    real: RealRoom,
) -> None:
    real.env["IS_SANDBOX"] = "1"  # as root, bypass mode needs it
    real.claude_json["bypassPermissionsModeAccepted"] = True
    real.start("frontend", args=("--dangerously-skip-permissions",))
    message_id = _send(real, "backend", "frontend", "run the migrations (body-77be)")
    real.wait(lambda: "held" in str(real.member("frontend").get("delivery")), TURN, "frontend")
    assert "approve it in its pane" in str(real.member("frontend")["delivery"])
    assert _message(real, message_id)["status"] == "queued"
    real.wait(lambda: "Held message from another session" in real.screen("frontend"), TURN)
    assert real.seen.turns_showing("frontend", "body-77be") == 0
    # the user approves in the client's own dialog: then it is delivered, once
    # the dialog is drawn before it takes keys: a key it did not take is pressed again
    _press_until(real, "Down", lambda: f"{PROMPT} Deliver" in real.screen("frontend"))
    _press_until(
        real,
        "Enter",
        lambda: "Held message from another session" not in real.screen("frontend"),
        only_while=lambda: f"{PROMPT} Deliver" in real.screen("frontend"),
    )
    real.wait(lambda: _message(real, message_id)["status"] == "delivered", TURN, "frontend")
    real.wait(lambda: not real.member("frontend").get("delivery"), TURN, "frontend")
    real.wait(lambda: real.seen.turns_showing("frontend", "body-77be"), TURN, "frontend")
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, "frontend")
    assert real.seen.turns_showing("frontend", "body-77be") == 1
    # a held message is where the client answers: held, then delivered once approved
    assert _native_statuses(real) == ["delivered"]


def test_a_send_message_between_two_real_sessions_is_in_the_history(
    real: RealRoom, script: Script
) -> None:
    script.add("NATIVE-SEND", Reply(call=("ToolSearch", {"query": "select:SendMessage"})))
    script.add(
        "tool_reference:SendMessage",
        Reply(
            call=(
                "SendMessage",
                {"to": "frontend", "message": "native hello (body-5e0d)", "summary": "hello"},
            )
        ),
        after_tool=True,
    )
    real.start("backend", "frontend", args=("--allowedTools=SendMessage,ToolSearch",))
    real.type("backend", "NATIVE-SEND: say hello to frontend your own way")
    real.wait(lambda: real.seen.turns_showing("frontend", "body-5e0d"), TURN, "frontend")
    found = real.wait(
        lambda: [m for m in _history(real) if "body-5e0d" in str(m["body"])],
        TURN,
        "backend",
        "frontend",
    )
    assert isinstance(found, list)
    (message,) = found
    assert (message["sender"], message["recipient"]) == ("backend", "frontend")  # verified
    assert message["kind"] == "native"
    assert message["via"] == "native"
    assert message["body"] == "native hello (body-5e0d)"


@pytest.fixture
def old_claude(real: RealRoom) -> Path:
    require_tool(OLD_CLAUDE.is_file() and os.access(OLD_CLAUDE, os.X_OK), f"{OLD_CLAUDE}")
    real.env["AGENT_ROOM_CLAUDE"] = str(OLD_CLAUDE)
    return OLD_CLAUDE


def test_with_a_client_without_the_socket_the_message_comes_through_the_pane(
    real: RealRoom, old_claude: Path
) -> None:
    real.start("frontend")
    entries = [json.loads(e.read_text()) for e in (real.home / ".claude/sessions").glob("*.json")]
    clients = [e for e in entries if not e.get("agentRoomPeer")]
    assert clients
    assert not any("messagingSocketPath" in e for e in clients), clients
    message_id = _send(real, "backend", "frontend", "the schema moved (body-c3d9)")
    nudge = f"[agent-room] 1 new message from @backend (#{message_id})"
    real.wait(lambda: real.seen.turns_showing("frontend", "body-c3d9"), TURN, "frontend")
    real.wait(lambda: _message(real, message_id)["status"] == "delivered", TURN, "frontend")
    real.wait(lambda: real.seen.turns_showing("frontend", nudge), TURN, "frontend")  # typed
    # receipted by the typed nudge's hook; where that receipt is missed (a hook cannot
    # reach a room busy past its timeout), the Stop hook hands the body over instead
    assert _message(real, message_id)["via"] in ("nudge", "stop")
    assert not any("<cross-session-message" in s for s in real.seen.shown("frontend"))
    room = real.open()
    try:
        kinds = {e["kind"] for e in room.store.events(limit=5000)}
    finally:
        room.close()
    assert "delivery.nudged" in kinds
    assert "delivery.native" not in kinds
    wait_for(lambda: real.member("frontend")["unread"] == 0, timeout=TURN)


def _press_until(
    real: RealRoom,
    key: str,
    done: Callable[[], bool],
    *,
    only_while: Callable[[], bool] = lambda: True,
) -> None:
    """Press ``key`` in @frontend's pane until ``done``, again every 2 s while the pane
    still shows what the key acts on (``only_while``)."""

    def pressed() -> bool:
        if done():
            return True
        if only_while():
            real.keys("frontend", key)
        return poll(done, timeout=2, step=0.1)

    real.wait(pressed, TURN, "frontend")
