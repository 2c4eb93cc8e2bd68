"""Hook cost and delivery latency per client: Claude Code, Codex CLI, Gemini CLI.

1. Hooks: ``agent-room hook [--client KIND] EVENT`` as a whole process with each client's
   recorded payloads (tests/fixtures), a session's five events in turn (start, prompt,
   permission dialog, end of turn, end), interleaved in seeded random rounds with the bare
   interpreter (``python -c pass``); every run is checked (state after it, no error).
2. Delivery: the pinned Codex CLI and Gemini CLI (.tools/) in tmux against the loopback
   stand-in (agent_room/demo/client_api.py), ``agent-room watch`` delivering: per message, from
   the spawn of ``agent-room send`` until the nudge shows in the pane, and until the
   client's own hook has receipted it. Needs tmux and both clients (``--hooks-only``
   skips this part).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from _common import (
    ROOT,
    Command,
    CommandFailed,
    Stats,
    bench_env,
    median,
    ms,
    print_table,
    stop_process,
    time_round_robin,
    venv_python,
    venv_script,
    wait_until,
    write_result,
)

from agent_room.demo.client_api import StandIn

FIXTURES = ROOT / "tests" / "fixtures"
CLIENT_BUDGET = 1.25
"""A Codex or Gemini session's median hook, at most this many times Claude Code's: the
same room work, plus only the normalising of the payload (bench_hook.py holds Claude
Code's own budget against the bare interpreter)."""
SEED = 20251
CODEX = "codex-0.169.0/hooks-tui"
GEMINI = "gemini-cli-0.61.0/hooks-tui/gemini-tui"
SESSIONS: dict[str, list[tuple[str, str, str]]] = {
    "claude": [
        ("SessionStart", "claude-code-2.1.330/hook-SessionStart-startup.json", "idle"),
        ("UserPromptSubmit", "claude-code-2.1.330/hook-UserPromptSubmit.json", "busy"),
        ("Notification", "claude-code-2.1.197/hook-Notification-permission_prompt.json", "waiting"),
        ("Stop", "claude-code-2.1.330/hook-Stop.json", "idle"),
        ("SessionEnd", "claude-code-2.1.330/hook-SessionEnd-other.json", "ended"),
    ],
    "codex": [
        ("SessionStart", f"{CODEX}-nodaemon/codex-tui-nodaemon-SessionStart-652.json", "idle"),
        ("UserPromptSubmit", f"{CODEX}/codex-tui-UserPromptSubmit-594.json", "busy"),
        ("PermissionRequest", f"{CODEX}/codex-tui-PermissionRequest-594.json", "waiting"),
        ("Stop", f"{CODEX}/codex-tui-Stop-601.json", "idle"),
        ("SessionEnd", f"{CODEX}-nodaemon/codex-tui-nodaemon-SessionEnd.json", "ended"),
    ],
    "gemini": [
        ("SessionStart", f"{GEMINI}-SessionStart-startup.json", "idle"),
        ("BeforeAgent", f"{GEMINI}-BeforeAgent.json", "busy"),
        ("Notification", f"{GEMINI}-Notification-ToolPermission.json", "waiting"),
        ("AfterAgent", f"{GEMINI}-AfterAgent.json", "idle"),
        ("SessionEnd", f"{GEMINI}-SessionEnd-1of3.json", "ended"),
    ],
}
"""Each client's events for one session, the recorded payload and the state after it."""


def _payload(fixture: str, session_id: str) -> bytes:
    data = json.loads((FIXTURES / fixture).read_text())
    data = data.get("stdin_json", data)  # the other clients' files wrap stdin
    data["session_id"] = session_id
    return json.dumps(data).encode()


def _state(home: Path, session_id: str) -> str | None:
    conn = sqlite3.connect(home / "room.db", isolation_level=None)
    try:
        row = conn.execute(
            "SELECT state FROM sessions WHERE session_id = $1", (session_id,)
        ).fetchall()
    finally:
        conn.close()
    return str(row[0][0]) if row else None


def hook_commands(scratch: Path, agent_pid: int) -> list[Command]:
    """One command per client event, each client in a room of its own; events of one
    client run in session order (a setup step replays the ones before it)."""
    commands = []
    for kind, events in SESSIONS.items():
        home = scratch / kind / "room"
        session_id = f"bench-{kind}"
        env = bench_env(home, AGENT_ROOM_NAME=f"bench-{kind}", AGENT_ROOM_AGENT=kind)
        if kind == "claude":
            env["CLAUDE_PID"] = str(agent_pid)
        client = [] if kind == "claude" else ["--client", kind]
        argv = {e: [str(venv_script("agent-room")), "hook", *client, e] for e, _, _ in events}
        payloads = {e: _payload(f, session_id) for e, f, _ in events}

        def before(
            index: int, argv: dict[str, list[str]] = argv, payloads: dict[str, bytes] = payloads,
            events: list[tuple[str, str, str]] = events, env: dict[str, str] = env,
        ) -> Callable[[], None]:  # fmt: skip
            def setup() -> None:  # the session as it is before this event
                for event, _, _ in events[:index]:
                    subprocess.run(argv[event], input=payloads[event], env=env, check=True)

            return setup

        def after(
            state: str, label: str, home: Path = home, session_id: str = session_id
        ) -> Callable[[subprocess.CompletedProcess[bytes]], None]:
            def check(_result: subprocess.CompletedProcess[bytes]) -> None:
                if (home / "errors.log").exists():
                    raise CommandFailed(f"{label}: {(home / 'errors.log').read_text()[-300:]}")
                found = _state(home, session_id)
                if found != state:
                    raise CommandFailed(f"{label}: the session is {found}, not {state}")

            return check

        for index, (event, _, state) in enumerate(events):
            label = f"{kind}: {event}"
            commands.append(
                Command(
                    label, argv[event], env, setup=before(index), check=after(state, label),
                    stdin=payloads[event],
                )
            )  # fmt: skip
    return commands


@contextmanager
def _sleeper() -> Iterator[int]:
    proc = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
    try:
        yield proc.pid
    finally:
        stop_process(proc)


# -- delivery ------------------------------------------------------------------------


class Room:
    """One throw-away room with a Codex or Gemini agent in tmux and a running watcher."""

    READY: ClassVar[dict[str, str]] = {
        "codex": "Ask Codex to do anything",
        "gemini": "Type your message",
    }

    def __init__(self, scratch: Path, kind: str, api: StandIn) -> None:
        self.kind = kind
        self.home = scratch / "home"
        (self.home / ".codex").mkdir(parents=True, exist_ok=True)
        (self.home / ".codex" / "config.toml").write_text(
            'model = "stand-in-model"\nmodel_provider = "standin"\n\n[model_providers.standin]\n'
            f'name = "Stand-in"\nbase_url = "{api.url}/v1"\nenv_key = "STANDIN_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        (self.home / ".gemini").mkdir(exist_ok=True)
        auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(auth))
        self.room = scratch / f"room-{kind}"
        self.socket = str(scratch / f"tmux-{kind}.sock")
        tools = ROOT / ".tools"
        self.env = bench_env(
            self.room,
            HOME=str(self.home),
            PATH=f"{venv_python().parent}{os.pathsep}{os.environ.get('PATH', '')}",
            STANDIN_API_KEY="k",
            GEMINI_API_KEY="k",
            GOOGLE_GEMINI_BASE_URL=api.url,
            AGENT_ROOM_TMUX=self.socket,
            AGENT_ROOM_CODEX=str(tools / "codex" / "node_modules" / ".bin" / "codex"),
            AGENT_ROOM_GEMINI=str(tools / "gemini-cli" / "node_modules" / ".bin" / "gemini"),
        )
        for var in ("TMUX", "TMUX_PANE", "CLAUDECODE", "CLAUDE_PID"):
            self.env.pop(var, None)
        self.watch: subprocess.Popen[bytes] | None = None

    def cli(self, *args: str, name: str | None = None) -> str:
        env = dict(self.env, **({"AGENT_ROOM_NAME": name} if name else {}))
        out = subprocess.run(
            [str(venv_script("agent-room")), *args], env=env, capture_output=True, check=True
        )
        return out.stdout.decode()

    def screen(self) -> str:
        out = subprocess.run(
            ["tmux", "-S", self.socket, "capture-pane", "-p", "-t", "=ac-agent:"],
            capture_output=True,
            check=False,
        )
        return out.stdout.decode()

    def state(self) -> str:
        rows = json.loads(self.cli("who", "--json"))
        return next((str(r["state"]) for r in rows if r["name"] == "agent"), "")

    def status(self, message_id: int) -> str:
        conn = sqlite3.connect(self.room / "room.db", isolation_level=None)
        try:
            row = conn.execute("SELECT status FROM messages WHERE id = $1", (message_id,))
            found = row.fetchall()
        finally:
            conn.close()
        return str(found[0][0]) if found else ""

    def start(self) -> None:
        work = self.room.parent / f"work-{self.kind}"
        work.mkdir()
        self.cli("start", "agent", "--agent", self.kind, "--cwd", str(work), "--detach")
        wait_until(lambda: self.READY[self.kind] in self.screen(), timeout=60, what="the prompt")
        tmux = ["tmux", "-S", self.socket, "send-keys", "-t", "=ac-agent:"]
        subprocess.run([*tmux, "-l", "--", "say hello"], check=True)
        time.sleep(0.3)
        subprocess.run([*tmux, "Enter"], check=True)
        wait_until(lambda: self.state() == "idle", timeout=60, what="the agent idle")
        self.cli("join", "sender")
        self.watch = subprocess.Popen(
            [str(venv_script("agent-room")), "watch"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def close(self) -> None:
        if self.watch is not None:
            stop_process(self.watch)
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], check=False)


def deliver(room: Room, messages: int) -> dict[str, list[float]]:
    """Send ``messages`` one at a time to the idle agent; time nudge and receipt."""
    times: dict[str, list[float]] = {"nudge visible": [], "receipted by the hook": []}
    for n in range(messages):
        wait_until(lambda: room.state() == "idle", timeout=60, what="the agent idle")
        time.sleep(0.2)
        start = time.perf_counter()
        sent = room.cli("send", "@agent", f"bench message {n}", name="sender")
        message_id = int(sent.strip())
        nudge = f"(#{message_id})"
        seen: dict[str, float] = {}
        while len(seen) < 2:
            now = time.perf_counter() - start
            if "nudge" not in seen and nudge in room.screen():
                seen["nudge"] = now
            if "receipt" not in seen and room.status(message_id) in {"delivered", "read"}:
                seen["receipt"] = now
                seen.setdefault("nudge", now)
            if now > 60:
                raise TimeoutError(f"message #{message_id} was not delivered in 60 s")
            time.sleep(0.002)
        times["nudge visible"].append(seen["nudge"])
        times["receipted by the hook"].append(seen["receipt"])
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="few runs: a smoke run")
    parser.add_argument("--hooks-only", action="store_true", help="skip the real clients")
    args = parser.parse_args(argv)
    runs, messages = (5, 3) if args.quick else (30, 10)
    results: dict[str, Any] = {"quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="agent-room-bench-clients-") as tmp, _sleeper() as pid:
        scratch = Path(tmp)
        python = str(venv_python())
        base = Command("python -c pass", [python, "-c", "pass"], bench_env(scratch / "x"))
        base.stdin = b"{}"
        commands = [base, *hook_commands(scratch, pid)]
        print(f"hooks: {len(commands)} commands x {runs} runs, interleaved", file=sys.stderr)
        time_round_robin(commands, runs, shuffle_seed=SEED)
        stats = {c.label: Stats.of(c.timings) for c in commands}
        bare = stats["python -c pass"].median
        rows = [[k, ms(s.median), ms(s.p95), f"{s.median / bare:.2f}x"] for k, s in stats.items()]
        print_table(["hook process", "median ms", "p95 ms", "vs python"], rows, title="Hooks")
        per_client = {
            kind: median([stats[f"{kind}: {e}"].median for e, _, _ in events])
            for kind, events in SESSIONS.items()
        }
        ratios = {kind: cost / per_client["claude"] for kind, cost in per_client.items()}
        ok = all(r <= CLIENT_BUDGET for r in ratios.values())
        print("\nA session's median hook, by client: " + ", ".join(
            f"{k} {ms(v)} ms ({v / bare:.2f}x python, {ratios[k]:.2f}x claude)"
            for k, v in per_client.items()
        ))  # fmt: skip
        print(f"Budget: each client's hooks <= {CLIENT_BUDGET:g}x Claude Code's: "
              f"{'PASS' if ok else 'FAIL'}")  # fmt: skip
        results["hooks"] = {
            k: {**s.as_ms(), "ratio_to_python": round(s.median / bare, 2)} for k, s in stats.items()
        }
        results["per_client_median_ms"] = {k: round(v * 1e3, 2) for k, v in per_client.items()}
        results["budget"] = {
            "vs_claude": CLIENT_BUDGET,
            "ratios": {k: round(v, 2) for k, v in ratios.items()},
            "pass": ok,
        }

        if not args.hooks_only:
            if shutil.which("tmux") is None:
                raise SystemExit("tmux is needed for the delivery part (or --hooks-only)")
            delivery: dict[str, Any] = {}
            rows = []
            for kind in ("codex", "gemini"):
                print(f"delivery: {kind}, {messages} messages", file=sys.stderr)
                with StandIn() as api:
                    room = Room(scratch / f"d-{kind}", kind, api)
                    try:
                        room.start()
                        times = deliver(room, messages)
                    finally:
                        room.close()
                delivery[kind] = {k: Stats.of(v).as_ms() for k, v in times.items()}
                for what, values in times.items():
                    st = Stats.of(values)
                    rows.append([f"{kind}: {what}", ms(st.median), ms(st.p95), ms(st.maximum)])
            print_table(["send -> ...", "median ms", "p95 ms", "max ms"], rows, title="Delivery")
            results["delivery"] = delivery
    path = write_result("clients", results)
    print(f"Results: {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
