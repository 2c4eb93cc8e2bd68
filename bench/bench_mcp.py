"""Benchmark: agent-room's tools over MCP and HTTP hooks, beside hcom, on a real Claude Code.

Run it from the project root::

    .venv/bin/python bench/bench_mcp.py            # 20 rounds (about four minutes)
    .venv/bin/python bench/bench_mcp.py --quick    # 6 rounds

hcom 0.7.31 (PyPI, a Rust binary in a wheel) is installed into a virtual environment of
the benchmark's own (``bench/results/hcom-venv``), never into the project's. Both run
against one local stand-in of the model API that stamps the time it reads each request,
each with one idle real Claude Code (the pinned 2.1.330) as the recipient, in throw-away
HOMEs, rooms and private tmux servers. Interleaved, one round after another, each round
sending once per way in a rotating order, each send only once its recipient is idle:

- **agent-room, tool**: ``send_message`` called over MCP on the room's server (the
  sender's secret, one kept-alive connection, as a client holds it);
- **agent-room, command**: ``agent-room send`` as a process (the way before MCP);
- **hcom**: ``hcom send @NAME --from bench -- TEXT`` as a process.

Per send: the send's own time (the tool call's round trip, or the process), and send
start → the recipient's model receives the body (the stand-in read a request holding it).
Then a hook's cost (the HTTP hook on the room's server against ``agent-room hook`` as a
process, same payload), and CPU at rest over 30 s: each recipient Claude Code and the
tools' own processes (agent-room's watch; hcom's processes), beside a Claude Code run
alone (the floor: neither room, no hooks, no MCP). Last, a fleet of 50 agents'
worth of secrets and connections on the room's server: the watch's RSS and CPU at rest.

Goal (issue 28): agent-room's end-to-end median at most 0.9 x hcom's; the recipient's
CPU at rest not above agent-room's at e6b2a32 (1.48 % for 10 agents there, 0.15 % each);
the room's processes with 50 agents at most 150 MB RSS and 0.5 % CPU at rest. Results go
to ``bench/results/mcp.json``; the exit code is 1 when the end-to-end goal fails.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

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

from agent_room.demo.model_api import ModelApi, Recorded, Script
from agent_room.room.access import mint, read_token, serving_pid, url
from agent_room.room.service import Room

CLAUDE = ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
API_KEY = "sk-ant-api03-standin-0123456789abcdefghijklmnop"
HCOM_VERSION = "0.7.31"
WAYS = ("tool", "command", "hcom")
GOAL = 0.9
"""agent-room's end-to-end median (the tool) at most this share of hcom's."""
REST = 30.0
"""Seconds of CPU at rest measured."""
FLEET = 50


class StampingApi(ModelApi):
    """The model stand-in, noting when it first read a request holding each marker."""

    def __init__(self) -> None:
        super().__init__(Script())
        self.stamps: dict[str, float] = {}
        self.watching: set[str] = set()
        self._marks = threading.Lock()

    def record(self, request: Recorded) -> None:
        now = time.time()
        if self.watching and request.body is not None:
            text = json.dumps(request.body)
            with self._marks:
                for marker in [m for m in self.watching if m in text]:
                    self.stamps.setdefault(marker, now)
                    self.watching.discard(marker)
        super().record(request)


def _claude_json(home: Path, *work: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    config = {
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(w): {"hasTrustDialogAccepted": True} for w in work},
        "fullscreenUpsellSeenCount": 99,
        "hasSeenAutoDefaultNotice": True,
    }
    (home / ".claude.json").write_text(json.dumps(config))


def _base_env(home: Path, api: ModelApi) -> dict[str, str]:
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE", "TMUX", "AGENT_ROOM_", "HCOM"))
    }
    return {
        **keep,
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def install_hcom(say: Any) -> Path:
    """hcom in the benchmark's own venv; its binary."""
    venv = ROOT / "bench" / "results" / "hcom-venv"
    binary = venv / "bin" / "hcom"
    if binary.exists():
        found = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
        if HCOM_VERSION in found.stdout:
            return binary
    say(f"installing hcom {HCOM_VERSION} into {venv}")
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "-q", f"hcom=={HCOM_VERSION}"],
        check=True,
    )
    return binary


class McpSender:
    """``send_message`` over the room's server, on one kept-alive connection."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.connect()
        assert self.conn.sock is not None
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        }

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        self.conn.request("POST", "/mcp", json.dumps(message), self.headers)
        response = self.conn.getresponse()
        answer: dict[str, Any] = json.loads(response.read())
        if answer.get("result", {}).get("isError"):
            raise SystemExit(f"{tool} failed: {answer}")
        return answer


def _cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _named(comm: str, *, within: str | None = None) -> list[int]:
    """Processes whose name is ``comm`` (and whose command line holds ``within``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = str((entry / "cwd").readlink())
        except OSError:
            continue
        if name == comm and (within is None or within in cmdline or within in cwd):
            found.append(int(entry.name))
    return found


def cpu_at_rest(groups: dict[str, list[int]], seconds: float) -> dict[str, float]:
    """Each group's CPU, percent of one core, over ``seconds``."""
    tick = os.sysconf("SC_CLK_TCK")
    before = {name: _cpu_ticks(pids) for name, pids in groups.items()}
    time.sleep(seconds)
    after = {name: _cpu_ticks(pids) for name, pids in groups.items()}
    return {name: 100.0 * (after[name] - before[name]) / tick / seconds for name in groups}


class Bench:
    """Both systems, set up once, measured round after round."""

    def __init__(self, scratch: Path, api: StampingApi, hcom: Path, say: Any) -> None:
        self.scratch, self.api, self.hcom_bin, self.say = scratch, api, hcom, say
        self.room_home = scratch / "room"
        self.ar_home = scratch / "ar-home"
        self.hc_home = scratch / "hc-home"
        self.ar_work, self.hc_work = scratch / "frontend", scratch / "hcom-work"
        self.plain_work = scratch / "plain"
        for folder in (self.ar_work, self.hc_work, self.plain_work):
            folder.mkdir()
        _claude_json(self.ar_home, self.ar_work, self.plain_work)
        _claude_json(self.hc_home, self.hc_work)
        (scratch / "tmux").mkdir(mode=0o700)
        self.socket = str(scratch / "tmux" / "agent-room")
        self.ar_env = {
            **_base_env(self.ar_home, api),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "AGENT_ROOM_HOME": str(self.room_home),
            "AGENT_ROOM_TMUX": self.socket,
            "AGENT_ROOM_CLAUDE": str(CLAUDE),
            "AGENT_ROOM_WATCH": "off",  # the benchmark runs the watch it measures
        }
        self.hc_env = {
            **_base_env(self.hc_home, api),
            "HCOM_DIR": str(self.hc_home / ".hcom"),
            "TMUX_TMPDIR": str(scratch / "tmux"),
            "PATH": f"{hcom.parent}{os.pathsep}{CLAUDE.parent}{os.pathsep}{os.environ['PATH']}",
        }
        self.watch: subprocess.Popen[bytes] | None = None
        self.hcom_name = ""
        self.sender: McpSender | None = None

    def agent_room(self, *args: str, name: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**self.ar_env, **({"AGENT_ROOM_NAME": name} if name else {})}
        return subprocess.run(
            [sys.executable, "-m", "agent_room", *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

    def start(self) -> None:
        self.watch = subprocess.Popen(
            [sys.executable, "-m", "agent_room", "watch"],
            env=self.ar_env,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(lambda: serving_pid(str(self.room_home)), timeout=60, what="the room's server")
        started = self.agent_room("start", "frontend", "--cwd", str(self.ar_work), "--detach")
        if started.returncode:
            raise SystemExit(started.stderr)
        assert self.agent_room("join", "backend").returncode == 0
        token = read_token(mint(str(self.room_home), "backend"))
        port = int(url_port(self.room_home))
        assert token is not None
        self.sender = McpSender(port, token)
        launched = subprocess.run(
            [str(self.hcom_bin), "1", "claude", "--terminal", "tmux"],
            env=self.hc_env,
            cwd=self.hc_work,
            capture_output=True,
            text=True,
            check=True,
        )
        plain = [str(CLAUDE), "--name", "plain"]  # the floor: Claude Code alone, at rest
        env = [f"-e{k}={v}" for k, v in self.ar_env.items() if not k.startswith("AGENT_ROOM_")]
        subprocess.run(
            ["tmux", "-S", self.socket, "new-session", "-d", "-s", "plain", "-c",
             str(self.plain_work), *env, "--", *plain],
            check=True,
        )  # fmt: skip
        names = [ln for ln in launched.stdout.splitlines() if ln.startswith("Names:")]
        self.hcom_name = names[0].split(":", 1)[1].strip()
        self.say(f"waiting for both Claude Codes (hcom's is @{self.hcom_name})")
        wait_until(self.ar_idle, timeout=120, step=0.2, what="agent-room's recipient")
        wait_until(self.hc_idle, timeout=120, step=0.5, what="hcom's recipient")
        time.sleep(3)

    def ar_idle(self) -> bool:
        room = Room.open({"AGENT_ROOM_HOME": str(self.room_home)})
        try:
            row = room.store.holder("frontend")
            return bool(
                row and row["state"] == "idle" and room.store.open_nudge("frontend") is None
            )
        finally:
            room.close()

    def hc_idle(self) -> bool:
        found = subprocess.run(
            [str(self.hcom_bin), "list", self.hcom_name, "status"],
            env=self.hc_env,
            capture_output=True,
            text=True,
            check=False,
        )
        return found.stdout.strip() == "listening"

    def one(self, way: str, index: int) -> dict[str, float]:
        """One send the ``way`` given to an idle recipient; its two times."""
        wait_until(self.hc_idle if way == "hcom" else self.ar_idle, timeout=120, step=0.05)
        time.sleep(0.5)  # (the recipient settles after its idle)
        marker = f"bench-{way}-{index}-{uuid.uuid4().hex[:8]}"
        body = f"bench message {marker}"
        self.api.watching.add(marker)
        start = time.time()
        if way == "tool":
            assert self.sender is not None
            self.sender.call("send_message", {"recipient": "@frontend", "text": body})
        elif way == "command":
            env = {**self.ar_env, "AGENT_ROOM_NAME": "backend"}
            command = [str(Path(sys.executable).parent / "agent-room"), "send", "@frontend", body]
            subprocess.run(command, env=env, capture_output=True, check=True)
        else:
            command = [str(self.hcom_bin), "send", f"@{self.hcom_name}", "--from", "bench"]
            command += ["--intent", "inform", "--", body]
            subprocess.run(command, env=self.hc_env, capture_output=True, check=True)
        sent = time.time()
        wait_until(lambda: marker in self.api.stamps, timeout=60, step=0.002, what=marker)
        return {"send": sent - start, "received": self.api.stamps[marker] - start}

    def hooks(self, runs: int) -> dict[str, Stats]:
        """A Notification hook (idle): over HTTP on the room's server, and as a process."""
        room = Room.open({"AGENT_ROOM_HOME": str(self.room_home)})
        try:
            session = str(room.store.holder("frontend")["session_id"])  # type: ignore[index]
        finally:
            room.close()
        payload = json.dumps(
            {
                "session_id": session,
                "hook_event_name": "Notification",
                "notification_type": "idle_prompt",
                "message": "bench",
            }
        )
        token = read_token(mint(str(self.room_home), "bench-hook"))
        port = url_port(self.room_home)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        http_times, process_times = [], []
        env = {**self.ar_env, "AGENT_ROOM_NAME": "frontend"}
        script = str(Path(sys.executable).parent / "agent-room")
        for _ in range(runs):
            start = time.perf_counter()
            conn.request("POST", "/hooks/Notification", payload, headers)
            conn.getresponse().read()
            http_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run(
                [script, "hook", "Notification"], input=payload.encode(), env=env, check=True
            )
            process_times.append(time.perf_counter() - start)
        return {"http": Stats.of(http_times), "process": Stats.of(process_times)}

    def rest(self) -> dict[str, float]:
        """CPU at rest of each recipient Claude Code and of each system's own processes."""
        room = Room.open({"AGENT_ROOM_HOME": str(self.room_home)})
        try:
            ar_claude = int(room.store.holder("frontend")["pid"])  # type: ignore[index]
        finally:
            room.close()
        hc_claude = _named("claude", within=str(self.hc_work))
        plain = _named("claude", within=str(self.plain_work))
        assert self.watch is not None
        groups = {
            "agent-room recipient": _tree(ar_claude),
            "hcom recipient": sorted({q for p in hc_claude for q in _tree(p)}),
            "agent-room watch": [self.watch.pid],
            "plain Claude Code (no room, no hcom)": sorted({q for p in plain for q in _tree(p)}),
            "hcom processes": _named("hcom"),
        }
        return cpu_at_rest(groups, REST)

    def fleet(self) -> dict[str, float]:
        """The room's server with ``FLEET`` agents' secrets, each having connected."""
        assert self.watch is not None
        port = url_port(self.room_home)
        for n in range(FLEET):
            name = f"fleet-{n}"
            assert self.agent_room("join", name).returncode == 0
            token = read_token(mint(str(self.room_home), name))
            assert token is not None
            McpSender(port, token).call("who", {})
        time.sleep(5)
        cpu = cpu_at_rest({"watch": [self.watch.pid]}, REST)["watch"]
        return {"agents": FLEET, "watch_rss_mb": _rss_kb(self.watch.pid) / 1024, "watch_cpu": cpu}

    def close(self) -> None:
        subprocess.run(
            [str(self.hcom_bin), "kill", "all"], env=self.hc_env, capture_output=True, check=False
        )
        if self.watch is not None:
            stop_process(self.watch)
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, check=False)


def url_port(room_home: Path) -> int:
    """The port of the room's server."""
    text = (room_home / "mcp" / "address").read_text().strip()
    port = int(text.rpartition(":")[2])
    assert url(port)
    return port


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 rounds")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-fleet", action="store_true", help="skip the 50-agent part")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args(argv)
    rounds = 6 if args.quick else args.rounds
    say = progress(args.quiet)
    if not CLAUDE.exists() or shutil.which("tmux") is None:
        print(f"needs tmux and Claude Code at {CLAUDE} (.ci/setup installs it)", file=sys.stderr)
        return 1
    hcom = install_hcom(say)
    scratch = Path(tempfile.mkdtemp(prefix="agent-room-bench-mcp-"))
    samples: dict[str, list[dict[str, float]]] = {w: [] for w in WAYS}
    api = StampingApi()
    with api:
        bench = Bench(scratch, api, hcom, say)
        try:
            bench.start()
            for index in range(rounds + 2):  # two warm-up rounds, dropped
                order = WAYS[index % 3 :] + WAYS[: index % 3]
                for way in order:
                    sample = bench.one(way, index)
                    if index >= 2:
                        samples[way].append(sample)
                say(f"round {index + 1}/{rounds + 2}")
            hooks = bench.hooks(20 if args.quick else 50)
            say("CPU at rest")
            rest = bench.rest()
            fleet = None if args.no_fleet else bench.fleet()
        finally:
            bench.close()
            shutil.rmtree(scratch, ignore_errors=True)
    stats = {
        w: {k: Stats.of([s[k] for s in samples[w]]) for k in ("send", "received")} for w in WAYS
    }
    hcom_median = stats["hcom"]["received"].median
    rows = [
        [
            label,
            f"{ms(stats[w]['received'].median)} (p95 {ms(stats[w]['received'].p95)})",
            ms(stats[w]["send"].median),
            f"{stats[w]['received'].median / hcom_median:.2f}x",
        ]
        for label, w in (
            ("agent-room: send_message over MCP", "tool"),
            ("agent-room: `agent-room send` process", "command"),
            ("hcom: `hcom send` process", "hcom"),
        )
    ]
    print_table(["", "send -> model has the body", "the send itself", "vs hcom"], rows)
    print_table(
        ["hook (Notification)", "median", "p95"],
        [
            ["HTTP hook on the room's server", ms(hooks["http"].median), ms(hooks["http"].p95)],
            ["`agent-room hook` process", ms(hooks["process"].median), ms(hooks["process"].p95)],
        ],
    )
    print_table(
        ["at rest (1 agent each)", "CPU % of a core"], [[k, f"{v:.2f}"] for k, v in rest.items()]
    )
    if fleet is not None:
        print(
            f"fleet: {FLEET} agents on the room's server: watch {fleet['watch_rss_mb']:.0f} MB RSS,"
            f" {fleet['watch_cpu']:.2f} % CPU at rest (budget 150 MB, 0.5 %)"
        )
    ok = stats["tool"]["received"].median <= GOAL * hcom_median
    print(f"goal: end-to-end median at most {GOAL} x hcom's: {'ok' if ok else 'FAIL'}")
    write_result(
        "mcp",
        {
            "machine": machine_info(),
            "rounds": rounds,
            "ways": {w: {k: v.as_ms() for k, v in stats[w].items()} for w in WAYS},
            "hooks": {k: v.as_ms() for k, v in hooks.items()},
            "rest_cpu_percent": rest,
            "fleet": fleet,
            "goal_ok": ok,
        },
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
