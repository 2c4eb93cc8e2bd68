"""Registration under load, names, parents, subagents, liveness and the tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agent_room.adapters.processes import SystemProbe
from agent_room.core.tree import render_tree
from agent_room.room.roster import session_tree
from agent_room.room.service import Room
from agent_room.room.views import audit_events
from agent_room.store.attention import facts
from agent_room.turn.room.registry import Registry
from tests.conftest import Cli
from tests.hooks.conftest import Hook, fixture_payload, new_session
from tests.poll import wait_for


def _room(room_home: Path) -> Room:
    return Room.open({"AGENT_ROOM_HOME": str(room_home)})


def test_twenty_parallel_session_starts_are_all_registered(hook: Hook, room_home: Path) -> None:
    hook("SessionStart", new_session("SessionStart"))  # create the room first
    payloads = [new_session("SessionStart", cwd="/home/dev/shop") for _ in range(20)]

    def fire(index: int) -> int:
        return hook("SessionStart", payloads[index], env={"TMUX_PANE": f"%{index + 10}"})[0]

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert list(pool.map(fire, range(20))) == [0] * 20
    room = _room(room_home)
    rows = {r["session_id"]: r for r in room.store.members()}
    room.close()
    for index, payload in enumerate(payloads):
        row = rows[payload["session_id"]]
        assert row["pane"] == f"%{index + 10}"
    names = [rows[p["session_id"]]["name"] for p in payloads]
    assert len(set(names)) == 20  # two sessions in one cwd stay apart
    assert set(names) == {"shop", *(f"shop-{n}" for n in range(2, 21))}
    assert not (room_home / "errors.log").exists()


def test_same_cwd_sessions_keep_their_own_state(hook: Hook, room_home: Path) -> None:
    first = new_session("SessionStart", cwd="/p/api")
    second = new_session("SessionStart", cwd="/p/api")
    hook("SessionStart", first)
    hook("SessionStart", second)
    hook("UserPromptSubmit", {**first, "hook_event_name": "UserPromptSubmit", "prompt": "go"})
    room = _room(room_home)
    a = room.store.session(first["session_id"])
    b = room.store.session(second["session_id"])
    room.close()
    assert a is not None
    assert b is not None
    assert (a["name"], a["state"]) == ("api", "busy")
    assert (b["name"], b["state"]) == ("api-2", "idle")


def test_parent_named_by_the_spawner(hook: Hook, room_home: Path) -> None:
    lead = new_session("SessionStart")
    hook("SessionStart", lead, env={"AGENT_ROOM_NAME": "lead"})
    worker = new_session("SessionStart")
    hook("SessionStart", worker, env={"AGENT_ROOM_NAME": "worker", "AGENT_ROOM_PARENT": "lead"})
    room = _room(room_home)
    row = room.store.session(worker["session_id"])
    room.close()
    assert row is not None
    assert row["parent"] == lead["session_id"]
    assert row["depth"] == 1


SPAWNER = """
import json, os, subprocess, sys, time, uuid
def fire(name):
    payload = {"session_id": str(uuid.uuid4()), "cwd": "/p", "hook_event_name": "SessionStart"}
    subprocess.run([sys.executable, "-m", "agent_room", "hook", "SessionStart"],
                   input=json.dumps(payload).encode(), check=True, capture_output=True,
                   env={**os.environ, "AGENT_ROOM_NAME": name})
    return payload["session_id"]
depth = int(sys.argv[1])
print(fire(f"level{depth}"), flush=True)
if depth < 2:
    subprocess.run([sys.executable, "-c", sys.argv[2], str(depth + 1), sys.argv[2]], check=True)
"""


def test_parent_found_among_process_ancestors(room_home: Path, tmp_path: Path) -> None:
    """level0 runs level1 runs level2, each a process firing its own SessionStart hook."""
    env = {k: v for k, v in os.environ.items() if k not in {"CLAUDE_PID", "AGENT_ROOM_PARENT"}}
    env["AGENT_ROOM_HOME"] = str(room_home)
    out = (
        subprocess.run(
            [sys.executable, "-c", SPAWNER, "0", SPAWNER],
            env=env,
            capture_output=True,
            check=True,
            timeout=60,
        )
        .stdout.decode()
        .split()
    )
    assert len(out) == 3
    room = _room(room_home)
    rows = [room.store.session(sid) for sid in out]
    registry = Registry(room, SystemProbe())
    assert sorted(registry.refresh()) == sorted(out)  # the spawners have exited
    roots = session_tree(room)
    room.close()
    assert [r["depth"] for r in rows if r] == [0, 1, 2]
    assert [r["parent"] for r in rows if r] == [None, out[0], out[1]]
    assert render_tree(roots).splitlines()[:3] == [
        "level0 [ended]",
        "└── level1 [ended]",
        "    └── level2 [ended]",
    ]


def test_subagents_are_leaves(hook: Hook, room_home: Path, cli: Cli) -> None:
    main = new_session("SessionStart")
    hook("SessionStart", main, env={"AGENT_ROOM_NAME": "main"})
    for agent_id in ("a1b2c3d4e5", "f6e5d4c3b2"):
        code, out, _ = hook(
            "SubagentStop",
            {
                **main,
                "hook_event_name": "SubagentStop",
                "agent_id": agent_id,
                "agent_type": "Explore",
                "agent_transcript_path": f"/t/{agent_id}.jsonl",
                "last_assistant_message": "found it",
                "stop_hook_active": False,
            },
        )
        assert (code, out) == (0, None)
    tree = json.loads(cli("tree", "--json").out)
    (root,) = tree
    assert root["label"] == "main"
    assert [c["kind"] for c in root["children"]] == ["subagent", "subagent"]
    assert all(c["children"] == [] for c in root["children"])
    assert "Explore a1b2c3d4" in cli("tree").out


def test_dead_and_reused_pids_show_as_ended(hook: Hook, room_home: Path, cli: Cli) -> None:
    doomed = subprocess.Popen(["sleep", "600"])
    dies = new_session("SessionStart")
    hook("SessionStart", dies, env={"AGENT_ROOM_NAME": "dies"}, pid=doomed.pid)
    reused = new_session("SessionStart")
    hook("SessionStart", reused, env={"AGENT_ROOM_NAME": "reused"})
    stays = new_session("SessionStart")
    hook("SessionStart", stays, env={"AGENT_ROOM_NAME": "stays"})
    # the PID of "reused" now belongs to a stranger: same number, another start time
    room = _room(room_home)
    room.store.conn.execute(
        "UPDATE sessions SET pid_start = pid_start - 1 WHERE session_id = $1",
        (reused["session_id"],),
    )
    room.close()
    doomed.kill()
    doomed.wait()
    who = {s["name"]: s for s in json.loads(cli("who", "--json").out)}
    assert who["dies"]["state"] == "ended"
    assert who["reused"]["state"] == "ended"
    assert who["stays"]["state"] == "idle"
    room = _room(room_home)
    events = [e for e in audit_events(room) if e.kind == "session.state" and e.data.get("reason")]
    room.close()
    assert len(events) == 2


def test_a_session_that_ends_or_dies_in_a_dialog_leaves_the_status_line(
    hook: Hook, cli: Cli
) -> None:
    """``⏸`` counts agents in a permission dialog: one whose session ends there
    (SessionEnd) or whose process dies there (the watch sees it go) is no longer one."""
    dialog = fixture_payload("claude-code-2.1.197/hook-Notification-permission_prompt.json")
    doomed = subprocess.Popen(["sleep", "600"])
    sessions = {name: new_session("SessionStart") for name in ("ends", "dies", "stays")}
    try:
        for name, start in sessions.items():
            pid = doomed.pid if name == "dies" else None
            env = {"AGENT_ROOM_NAME": name}
            assert hook("SessionStart", start, env=env, pid=pid)[0] == 0
            waits = {**dialog, "session_id": start["session_id"]}
            assert hook("Notification", waits, env=env, pid=pid)[0] == 0
        assert cli("status", "--format", "{waiting}").out == "3\n"
        ending = {**fixture_payload("claude-code-2.1.330/hook-SessionEnd-other.json")}
        ending["session_id"] = sessions["ends"]["session_id"]
        assert hook("SessionEnd", ending)[0] == 0
        assert cli("status", "--format", "{waiting}").out == "2\n"
        with cli.watching():
            doomed.kill()
            doomed.wait()
            wait_for(
                lambda: cli("status", "--format", "{waiting}").out == "1\n",
                timeout=30,
                what="the status line to stop counting the dead session",
            )
    finally:
        doomed.kill()
        doomed.wait()
    room = _room(cli.home)
    try:
        state = {r["name"]: r["state"] for r in room.who()}
        notified = [w[0] for w in facts(room.store.conn, time.time()).waiting]
    finally:
        room.close()
    assert state == {"ends": "ended", "dies": "ended", "stays": "waiting"}
    assert notified == ["stays"]  # the notifier's facts agree with the status line
