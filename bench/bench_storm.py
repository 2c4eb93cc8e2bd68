"""Storm: every agent of a room sends to the others at once; each message exactly once.

Run it from the project root::

    .venv/bin/python bench/bench_storm.py            # 50 agents, 20 messages each
    .venv/bin/python bench/bench_storm.py --quick    # 10 agents, 5 messages each

Stand-in agents (``tests/standin_agent.py``, firing the real hooks) run as the initial
commands of panes on a private tmux server and register in a throw-away room; one
``agent-room watch`` delivers. Then every agent sends at the same moment: agent *i*
sends its *N* messages to agents *i+1* ... *i+N* (round the room), one fresh ``agent-room
send`` process after the other, all agents in parallel; each body carries a unique
token. Agents are nudged while idle and handed the rest at their turn's end, while
their own sends are still going out, as in a busy room.

Gates, from the room's database and what each pane printed:

- every send stored its message (a failed send is reported with its one-line error);
- every message was handed over exactly once: one ``message.delivered`` receipt, its token
  once in the context its recipient's pane printed and in no other pane;
- none starved: every agent received all its messages.

Reported: the time from the storm's start until the last receipt, when each agent got its
last message (the slowest and the median agent), each message's time from its INSERT to
its receipt, and how long the sends took. Results go to ``bench/results/storm.json``;
the exit code is 1 when a gate fails.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
from _common import (
    ROOT,
    Stats,
    bench_env,
    git_state,
    median,
    print_table,
    progress,
    standin_command,
    stop_process,
    venv_python,
    venv_script,
    wait_until,
    write_result,
)
from _soak_gates import Send, delivery_counts, handed_over, read_only
from _tmux_observer import TmuxServer


class Storm:
    """The agents, the watcher and the sends of one run."""

    def __init__(
        self, scratch: Path, agents: int, messages: int, source: Path = ROOT, database: str = ""
    ) -> None:
        self.scratch = scratch
        self.home = scratch / "room"
        self.source = source
        """Whose code the room, the hooks, the sends and the watch run (a baseline's tree)."""
        self.database = database
        """The room's PostgreSQL URL (naming its password file), or empty: SQLite."""
        self.env = bench_env(self.home, PYTHONPATH=str(source))
        self.names = [f"agent{n:02d}" for n in range(agents)]
        self.messages = messages
        self.server = TmuxServer(self.env)
        self.sends: list[Send] = []
        self.watch: subprocess.Popen[bytes] | None = None

    def db(self) -> contextlib.closing[Any]:
        """A look at the room: read-only on SQLite, autocommit on PostgreSQL."""
        if not self.database:
            return read_only(self.home)
        return contextlib.closing(psycopg.connect(self.database, autocommit=True))

    def marks(self, count: int) -> str:
        """``count`` placeholders, comma-separated, in the room's engine's style."""
        return ",".join(("%s" if self.database else "?") for _ in range(count))

    def start(self) -> None:
        """The agents in their panes (each pane's output logged), then the watcher."""
        self.start_agents()
        self.start_watch()

    def start_agents(self) -> None:
        """The agents in their panes (each pane's output logged), every one registered."""
        # the room made by the room's own commands, as any revision's CLI makes it (a name
        # joined and gone again); from the scratch folder: ``-m`` puts it first on the path.
        # On PostgreSQL the room's file names the database first, as the machines guide says
        if self.database:
            self.home.mkdir(mode=0o700, parents=True)
            conf = self.home / "room.conf"
            conf.touch(mode=0o600)
            conf.write_text(f"database = {self.database}\n")
        for words in (["join", "storm-setup"], ["leave", "storm-setup"]):
            run = [str(venv_python()), "-m", "agent_room", *words]
            subprocess.run(run, env=self.env, cwd=self.scratch, check=True, capture_output=True)
        here = shlex.quote(str(self.scratch))
        for n, name in enumerate(self.names):
            # each writes its transcript, as the clients do: a Stop hook lost on a loaded
            # machine is healed from it, as it is for a user, rather than stranding the agent
            transcript = str(self.scratch / f"transcript-{name}.jsonl")
            standin = standin_command(
                self.home, name, "--transcript", transcript, source=self.source
            )
            command = f"sleep 0.5; cd {here} && exec {standin}"
            pane = self.server.start(command) if n == 0 else self.server.new_window(name, command)
            self.server.run("pipe-pane", "-t", pane, f"cat >> {self.scratch / f'pane-{name}.log'}")

        def registered() -> bool:
            with self.db() as conn:
                rows = conn.execute("SELECT name FROM sessions WHERE state = 'idle'").fetchall()
            return {str(r[0]) for r in rows} >= set(self.names)

        wait_until(registered, timeout=120, step=0.2, what="every agent registered and idle")

    def start_watch(self) -> None:
        """One ``agent-room watch``, once it holds the deliverer's lease."""
        self.watch = subprocess.Popen(
            [str(venv_script("agent-room")), "watch"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

        def leased() -> bool:
            return self.watch is not None and self.deliverer() == self.watch.pid

        wait_until(leased, timeout=30, step=0.1, what="the watcher to take the lease")

    def deliverer(self) -> int | None:
        """The pid holding the deliverer's lease."""
        with self.db() as conn:
            # on PostgreSQL each host has its own (``deliverer@HOST``); this run has one host
            row = conn.execute(
                "SELECT pid FROM leases WHERE name = 'deliverer' OR name LIKE 'deliverer@%'"
            ).fetchone()
        return None if row is None else int(row[0])

    def sender(self, index: int, go: threading.Event) -> None:
        """One agent's sends, one process after the other."""
        name = self.names[index]
        go.wait()
        for k in range(1, self.messages + 1):
            recipient = self.names[(index + k) % len(self.names)]
            self.send(name, recipient, f"storm-{index * 1000 + k:06d}")

    def send(self, sender: str, recipient: str, token: str) -> Send:
        """One ``agent-room send`` process from ``sender``, recorded in ``sends``."""
        send = Send(token, sender, recipient, time.time())
        self.sends.append(send)
        proc = subprocess.run(
            [str(venv_script("agent-room")), "send", f"@{recipient}", f"{send.token} hi"],
            env={**self.env, "AGENT_ROOM_NAME": sender},
            capture_output=True,
            timeout=120,
            check=False,
        )
        send.ended = time.time()
        out = proc.stdout.decode().strip()
        if proc.returncode == 0 and out.isdigit():
            send.message_id = int(out)
        else:
            send.error = proc.stderr.decode(errors="replace").strip() or "no id printed"
        return send

    def storm(self) -> float:
        """Every agent sends at once; returns when the storm started (epoch seconds)."""
        go = threading.Event()
        threads = [
            threading.Thread(target=self.sender, args=(i, go), daemon=True)
            for i in range(len(self.names))
        ]
        for thread in threads:
            thread.start()
        started = time.time()
        go.set()
        for thread in threads:
            thread.join()
        return started

    def drained(self) -> bool:
        with self.db() as conn:
            left = conn.execute(
                "SELECT count(*) FROM messages WHERE kind = 'chat'"
                " AND status NOT IN ('delivered', 'read')"
            ).fetchone()[0]
        return int(left) == 0

    def stop(self) -> None:
        if self.watch is not None:
            stop_process(self.watch)
        self.server.kill()
        self.stop_background()

    def stop_background(self) -> None:
        """End the room's background deliverer, as a user does (``agent-room watch
        --stop``, which signals only the watch its pid file names): the console starts it
        and it outlives the console; on PostgreSQL it would go on asking for the run's
        cluster after the run. A revision without that command leaves it be."""
        stop = [str(venv_python()), "-m", "agent_room", "watch", "--stop"]
        subprocess.run(stop, env=self.env, cwd=self.scratch, check=False, capture_output=True)


def gates(storm: Storm) -> dict[str, list[str]]:
    """Stored, exactly once, none starved."""
    seen = handed_over(storm.scratch, storm.names, "storm")
    with storm.db() as conn:
        receipts, status = delivery_counts(conn)
    stored = [f"{s.token}: the send failed: {s.error}" for s in storm.sends if s.message_id is None]
    once: list[str] = []
    got: dict[str, int] = dict.fromkeys(storm.names, 0)
    for send in storm.sends:
        if send.message_id is None:
            continue
        where = {n: c[send.token] for n, c in seen.items() if send.token in c}
        if status.get(send.message_id) not in ("delivered", "read"):
            once.append(f"#{send.message_id}: {status.get(send.message_id)}, not handed over")
        elif receipts.get(send.message_id) != 1:
            once.append(f"#{send.message_id}: {receipts.get(send.message_id, 0)} receipts")
        elif where != {send.recipient: 1}:
            once.append(f"#{send.message_id} to @{send.recipient}: handed over {where}")
        else:
            got[send.recipient] += 1
    starved = [f"@{n} got {c} of {storm.messages}" for n, c in got.items() if c < storm.messages]
    return {
        "every send stored its message": stored,
        "every message handed over exactly once": once,
        "no agent starved": starved,
    }


def timings(storm: Storm, started: float) -> dict[str, Any]:
    """When the messages were receipted, from the room's own timestamps."""
    ids = [s.message_id for s in storm.sends if s.message_id is not None]
    with storm.db() as conn:
        rows = conn.execute(
            f"SELECT recipient, created_at, delivered_at FROM messages WHERE id IN"
            f" ({storm.marks(len(ids))})",
            ids,
        ).fetchall()
    done = [r for r in rows if r[2] is not None]
    last_per_agent: dict[str, float] = {}
    for recipient, _created, delivered in done:
        last_per_agent[recipient] = max(last_per_agent.get(recipient, 0.0), delivered - started)
    sends_end = max((s.ended for s in storm.sends), default=started) - started
    return {
        "last_receipt_s": max((d - started for _r, _c, d in done), default=float("nan")),
        "sends_done_s": sends_end,
        "agent_last_median_s": median(list(last_per_agent.values())) if last_per_agent else 0,
        "agent_last_max_s": max(last_per_agent.values(), default=0.0),
        "insert_to_receipt": Stats.of([d - c for _r, c, d in done]).as_ms(),
        "send_process": Stats.of(
            [s.ended - s.started for s in storm.sends if s.message_id is not None]
        ).as_ms(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="10 agents, 5 messages each")
    parser.add_argument("--agents", type=int, help="agents in the room (default 50)")
    parser.add_argument("--messages", type=int, help="messages each agent sends (default 20)")
    parser.add_argument("--drain", type=float, default=600.0, help="seconds to wait at most")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args()
    agents = args.agents or (10 if args.quick else 50)
    messages = args.messages or (5 if args.quick else 20)
    if messages >= agents:
        parser.error("each agent sends to others only: --messages must be below --agents")
    step = progress(args.quiet)
    with tempfile.TemporaryDirectory(prefix="agent-room-storm-") as tmp:
        storm = Storm(Path(tmp), agents, messages)
        try:
            step(f"{agents} stand-in agents registering")
            storm.start()
            step(f"the storm: {agents} agents x {messages} messages at once")
            started = storm.storm()
            step("draining")
            drained = True
            try:
                wait_until(storm.drained, timeout=args.drain, step=0.2, what="the room to drain")
            except TimeoutError:
                drained = False
            time.sleep(1.0)  # the last contexts printed and logged
            found = gates(storm)
            if not drained:
                found["every message handed over exactly once"].insert(0, "the room never drained")
            times = timings(storm, started)
        finally:
            storm.stop()
    total = agents * messages
    print_table(
        ["storm", "value"],
        [
            ["messages (agents x each)", f"{total} ({agents} x {messages})"],
            ["all sends done, s after the start", f"{times['sends_done_s']:.2f}"],
            ["last receipt, s after the start", f"{times['last_receipt_s']:.2f}"],
            ["an agent's last message, median s", f"{times['agent_last_median_s']:.2f}"],
            ["an agent's last message, slowest s", f"{times['agent_last_max_s']:.2f}"],
            ["INSERT -> receipt, median ms", f"{times['insert_to_receipt']['median_ms']:.0f}"],
            ["INSERT -> receipt, p95 ms", f"{times['insert_to_receipt']['p95_ms']:.0f}"],
            ["INSERT -> receipt, max ms", f"{times['insert_to_receipt']['max_ms']:.0f}"],
            ["one send process, median ms", f"{times['send_process']['median_ms']:.0f}"],
        ],
        title=f"Storm: {agents} agents each sending {messages} messages at once",
    )
    ok = True
    for gate, problems in found.items():
        ok &= not problems
        print(f"{'PASS' if not problems else 'FAIL'}  {gate}")
        for problem in problems[:10]:
            print(f"      {problem}")
    print(f"Overall: {'PASS' if ok else 'FAIL'}")
    path = write_result(
        "storm",
        {
            "quick": args.quick,
            "agents": agents,
            "messages_each": messages,
            "git": git_state(),
            "timings": times,
            "gates": found,
            "pass": ok,
        },
    )
    print(f"Results: {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
