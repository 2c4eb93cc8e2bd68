"""Real Claude Code sessions in the room: listed live, ended by /exit, held by a dialog."""

from __future__ import annotations

from pathlib import Path

from agent_room.demo.model_api import Reply, Script
from agent_room.room.views import audit_events
from agent_room.turn import procfs
from tests.real.conftest import TURN, RealRoom

DIALOG = "Do you want to proceed?"


def test_sessions_are_listed_live_and_exit_ends_one(real: RealRoom) -> None:
    real.start("backend", "frontend")
    panes = {
        session: (pane, int(pid))
        for session, pane, pid in (
            line.split()
            for line in real.server.cmd(
                "list-panes", "-a", "-F", "#{session_name} #{pane_id} #{pane_pid}"
            ).stdout
        )
    }
    who = real.who()
    for name in ("backend", "frontend"):
        pane, pid = panes[f"ac-{name}"]
        assert (who[name]["pane"], who[name]["pid"]) == (pane, pid)
        assert who[name]["state"] == "idle"
        assert who[name]["cwd"] == str(real.root / name)
        # the registered pid is the real client itself, not a shell or a hook's parent
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert any(b"claude" in part for part in command), command
        assert who[name]["session_id"] in who[name]["transcript_path"]
    assert who["backend"]["session_id"] != who["frontend"]["session_id"]

    real.type("frontend", "/exit")
    real.wait(lambda: real.member("frontend")["state"] == "ended", TURN, "frontend")
    real.wait(lambda: "ac-frontend" not in real.sessions(), TURN)  # the client exited
    # the client exited (tmux may leave it a zombie for a while: that is not alive)
    real.wait(lambda: not procfs.is_alive(panes["ac-frontend"][1], None), TURN)
    assert real.member("backend")["state"] == "idle"
    assert "ac-backend" in real.sessions()


def _status(real: RealRoom, message_id: int) -> str:
    room = real.open()
    try:
        row = room.store.message(message_id)
        return str(row["status"]) if row else "gone"
    finally:
        room.close()


def _delivered_events(real: RealRoom, message_id: int) -> int:
    room = real.open()
    try:
        return sum(
            1
            for e in audit_events(room)
            if e.kind == "message.delivered" and e.message_id == message_id
        )
    finally:
        room.close()


def test_a_permission_dialog_holds_delivery_until_answered(real: RealRoom, script: Script) -> None:
    script.add("TASK-PERM", Reply("Creating the file.", bash="touch perm-ok.txt"))
    # manual mode: a command outside --allowedTools asks the user first
    real.start("frontend", args=["--permission-mode", "default"])
    assert real.run("join", "backend").code == 0

    real.type("frontend", "TASK-PERM: create the file")
    real.wait(lambda: DIALOG in real.screen("frontend"), TURN, "frontend")
    # the client reports the open dialog (Notification permission_prompt) after a few seconds
    real.wait(lambda: real.member("frontend")["state"] == "waiting", TURN, "frontend")

    body = "the schema moved to v2 (held-44)"
    sent = real.run("send", "@frontend", body, name="backend")
    assert sent.code == 0, sent.err
    message_id = int(sent.out)
    # the deliverer sees the dialog and holds: it says so, and types nothing
    real.wait(lambda: "permission" in real.member("frontend")["delivery"], TURN, "frontend")
    assert real.member("frontend")["state"] == "waiting"
    screen = real.screen("frontend")
    assert DIALOG in screen
    assert "[agent-room]" not in screen
    assert _status(real, message_id) == "queued"
    assert not real.seen.turns_showing("frontend", body)

    real.keys("frontend", "Enter")  # "1. Yes": the command runs, the turn goes on
    real.wait(lambda: _status(real, message_id) == "delivered", TURN, "frontend")
    real.wait(lambda: real.member("frontend")["state"] == "idle", TURN, "frontend")
    assert (real.root / "frontend" / "perm-ok.txt").exists()
    assert real.seen.turns_showing("frontend", body) == 1  # at the turn boundary, once
    assert _delivered_events(real, message_id) == 1
