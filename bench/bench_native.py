"""Benchmark: delivery through Claude Code's messaging socket against the tmux nudge.

Run it from the project root::

    .venv/bin/python bench/bench_native.py            # 12 messages each way (about a minute)
    .venv/bin/python bench/bench_native.py --quick    # 4 each way

One real Claude Code (the pinned 2.1.330 in ``.tools/claude-code``) runs in a pane of a
private tmux server with the room's plugin, against the local model stand-in
(``agent_room.demo.model_api``, no network), in a throw-away HOME and room; one
``agent-room watch`` delivers. Messages alternate between the two transports (the room
setting ``delivery_transport``: ``native-first``, then ``tmux``), so machine noise hits
both alike, and each is sent only once the agent is idle again. Per message:

- **wake-up**: from ``Room.send``'s commit until the deliverer's pass that handed it over
  began (its audit event: the frame written to the client's socket, or the nudge typed
  and Enter pressed);
- **client**: from there until the agent's UserPromptSubmit hook marked it delivered,
  the room's receipt for both transports (the client took the turn, the model gets the
  body);
- **total**: send to receipt.

Budget: each transport's median total under 1 s (the socket is not about speed: it needs
no pane and types nothing). Results go to ``bench/results/native.json``; the exit code is
1 when the budget fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    ROOT,
    Stats,
    machine_info,
    ms,
    print_table,
    progress,
    stop_process,
    wait_until,
    write_result,
)

from agent_room.core.native import SETTING
from agent_room.demo.model_api import ModelApi, Script
from agent_room.room.service import Room
from agent_room.store.settings import SettingsStore

CLAUDE = ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
API_KEY = "sk-ant-api03-standin-0123456789abcdefghijklmnop"
TRANSPORTS = ("native-first", "tmux")
HANDED = {"native-first": "delivery.native", "tmux": "delivery.nudged"}
PARTS = ("wake", "client", "total")
BUDGET = 1.0
"""Seconds: each transport's median from send to receipt."""


def _env(home: Path, room: Path, api: ModelApi, socket: str) -> dict[str, str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE", "TMUX", "AGENT_ROOM_"))
    }
    return {
        **keep,
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "AGENT_ROOM_HOME": str(room),
        "AGENT_ROOM_TMUX": socket,
        "AGENT_ROOM_CLAUDE": str(CLAUDE),
        "AGENT_ROOM_WATCH": "off",  # the benchmark runs the deliverer it times
    }


def _state(room: Room, name: str) -> tuple[str, bool]:
    row = room.store.holder(name)
    return (str(row["state"]) if row else "", room.store.open_nudge(name) is not None)


def _event_at(room: Room, kind: str, after: float) -> float | None:
    row = room.store.conn.execute(
        "SELECT min(at) FROM events WHERE kind = $1 AND at >= $2", (kind, after)
    ).fetchone()
    return float(row[0]) if row and row[0] is not None else None


def one_message(room: Room, transport: str, index: int) -> dict[str, float]:
    """Send one message over ``transport`` to an idle agent; its two latencies."""
    SettingsStore(room.store).save({SETTING: transport}, at=time.time(), by="bench")
    wait_until(lambda: _state(room, "frontend") == ("idle", False), timeout=60)
    sent_at = time.time()
    message_id = room.send("backend", "frontend", f"bench message {index} ({transport})")

    def delivered() -> bool:
        row = room.store.message(message_id)
        return row is not None and row["status"] == "delivered"

    wait_until(delivered, timeout=60, step=0.002, what="the receipt")
    row = room.store.message(message_id)
    assert row is not None
    handed = _event_at(room, HANDED[transport], sent_at)
    expected = "native" if transport == "native-first" else "nudge"
    if row["via"] != expected:
        raise SystemExit(f"message {message_id} went {row['via']}, not {expected}")
    handed_at = handed if handed is not None else float("nan")
    return {
        "wake": handed_at - sent_at,
        "client": float(row["delivered_at"]) - handed_at,
        "total": float(row["delivered_at"]) - sent_at,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 messages each way")
    parser.add_argument("--messages", type=int, default=12, help="messages per transport")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    count = 4 if args.quick else args.messages
    say = progress(args.quiet)
    if not CLAUDE.exists() or shutil.which("tmux") is None:
        print(f"needs tmux and Claude Code at {CLAUDE} (.ci/setup installs it)", file=sys.stderr)
        return 1
    scratch = Path(tempfile.mkdtemp(prefix="agent-room-bench-native-"))
    server = f"agent-room-bench-native-{os.getpid()}"
    socket = f"{os.environ.get('TMUX_TMPDIR', '/tmp')}/tmux-{os.getuid()}/{server}"
    watch: subprocess.Popen[bytes] | None = None
    samples: dict[str, list[dict[str, float]]] = {t: [] for t in TRANSPORTS}
    try:
        with ModelApi(Script()) as api:
            home, room_home, work = scratch / "home", scratch / "room", scratch / "frontend"
            home.mkdir()
            work.mkdir()
            (home / ".claude.json").write_text(
                json.dumps(
                    {
                        "hasCompletedOnboarding": True,
                        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                        "projects": {str(work): {"hasTrustDialogAccepted": True}},
                        "fullscreenUpsellSeenCount": 99,
                        "hasSeenAutoDefaultNotice": True,
                    }
                )
            )
            env = _env(home, room_home, api, socket)
            agent_room = [sys.executable, "-m", "agent_room"]
            subprocess.run(
                [*agent_room, "start", "frontend", "--cwd", str(work), "--detach"],
                env=env,
                check=True,
                capture_output=True,
            )
            watch = subprocess.Popen(
                [*agent_room, "watch"], env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            room = Room.open({"AGENT_ROOM_HOME": str(room_home)})
            try:
                room.join("backend")
                say("waiting for Claude Code to start")
                wait_until(lambda: _state(room, "frontend")[0] == "idle", timeout=90)
                time.sleep(2)  # the client settles (its first idle comes before the prompt)
                for index in range(count):
                    for transport in TRANSPORTS:
                        samples[transport].append(one_message(room, transport, index))
                    say(f"message {index + 1}/{count} each way")
            finally:
                room.close()
    finally:
        if watch is not None:
            stop_process(watch)
        subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    stats = {
        t: {part: Stats.of([s[part] for s in samples[t]]) for part in PARTS} for t in TRANSPORTS
    }
    rows = [
        [
            label,
            ms(stats["native-first"][part].median),
            ms(stats["native-first"][part].p95),
            ms(stats["tmux"][part].median),
            ms(stats["tmux"][part].p95),
        ]
        for label, part in (
            ("send -> deliverer's pass (wake-up)", "wake"),
            ("pass -> receipt by the hook (client)", "client"),
            ("send -> receipt (total)", "total"),
        )
    ]
    print_table(["", "socket median", "socket p95", "tmux median", "tmux p95"], rows)
    ok = all(stats[t]["total"].median < BUDGET for t in TRANSPORTS)
    print(f"budget: each median total under {BUDGET:.0f} s: {'ok' if ok else 'FAIL'}")
    write_result(
        "native",
        {
            "machine": machine_info(),
            "messages_per_transport": count,
            "socket": {k: v.as_ms() for k, v in stats["native-first"].items()},
            "tmux": {k: v.as_ms() for k, v in stats["tmux"].items()},
            "budget_ok": ok,
        },
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
