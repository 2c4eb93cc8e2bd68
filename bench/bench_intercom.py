"""Benchmark of ``agent-room ask``: the room's own cost per ask beside the bare client.

Run it from the project root::

    .venv/bin/python bench/bench_intercom.py            # 20 asks of each (about 40 s)
    .venv/bin/python bench/bench_intercom.py --quick    # 5 of each

The pinned Claude Code (``$AGENT_ROOM_CLAUDE``, else ``.tools/``) answers in print mode
against the model stand-in (``agent_room.demo.model_api``) in a throw-away HOME and room.
Round by round, in turn:

a. *the bare client*: ``claude -p --output-format json`` with exactly the arguments and
   environment ``ask`` gives it (the room's plugin, whose hooks run), in the repository;
b. *``agent-room ask --new REPO QUESTION``* as a fresh process (what an agent runs).

Reported: the median and p95 of each, the difference (which includes starting Python
and importing the package: see ``python -c pass``), and the room's own part inside an
ask (the decision, the store, the log: the ask's time less its client's time, from the
``--json`` record). Budget: that own part at most 30 ms (median). Exit code 1 when the
budget fails. Results go to ``bench/results/intercom.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    ROOT,
    median,
    ms,
    p95,
    print_table,
    progress,
    venv_python,
    venv_script,
    write_result,
)

from agent_room.adapters.claude import ClaudeHeadless
from agent_room.demo.model_api import ModelApi, Reply, Script
from agent_room.plugin import claude_flags

API_KEY = "sk-ant-api03-standin-0123456789abcdefghijklmnop"
OWN_BUDGET = 0.030
QUESTION = "How does the API refresh auth tokens?"


def _claude() -> str:
    given = os.environ.get("AGENT_ROOM_CLAUDE")
    return given or str(ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="5 asks of each")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    runs = 5 if args.quick else 20
    say = progress(args.quiet)
    script = Script()
    script.add("refresh auth tokens", Reply("Through POST /auth/refresh."))
    with tempfile.TemporaryDirectory(prefix="bench-intercom-") as tmp, ModelApi(script) as api:
        root = Path(tmp)
        repo, home, room = root / "api", root / "home", root / "room"
        repo.mkdir()
        home.mkdir()
        trusted = {str(repo.resolve()): {"hasTrustDialogAccepted": True}}
        config = {
            "hasCompletedOnboarding": True,
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            "projects": trusted,
        }
        (home / ".claude.json").write_text(json.dumps(config))
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE", "TMUX", "AGENT_ROOM_"))
        }
        env = {
            **base,
            "HOME": str(home),
            "PATH": f"{venv_python().parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "AGENT_ROOM_HOME": str(room),
            "AGENT_ROOM_CLAUDE": _claude(),
        }
        from agent_room.cli.ask import client_env
        from agent_room.room.intercom import Asker

        bare = ClaudeHeadless(
            _claude(),
            args=claude_flags(),
            env=client_env("api", Asker("operator", "operator"), env),
        )
        ask_argv = [str(venv_script("agent-room")), "ask", "--new", "--json", str(repo), QUESTION]
        bare_s: list[float] = []
        ask_s: list[float] = []
        own_s: list[float] = []
        for round_no in range(runs + 1):  # the first round warms the caches, untimed
            start = time.perf_counter()
            run = bare.run(str(repo), QUESTION, resume=None, max_turns=10, timeout=120)
            elapsed = time.perf_counter() - start
            if run.returncode != 0:
                raise SystemExit(f"the bare client failed: {run.stderr.strip()}")
            start = time.perf_counter()
            done = subprocess.run(
                ask_argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False
            )
            asked = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(f"agent-room ask failed: {done.stderr.decode().strip()}")
            record = json.loads(done.stdout)
            if round_no:
                bare_s.append(elapsed)
                ask_s.append(asked)
                own_s.append(record["duration_s"] - record["client_s"])
            say(f"round {round_no}: bare {ms(elapsed)} ms, ask {ms(asked)} ms")
        start = time.perf_counter()
        for _ in range(runs):
            subprocess.run([str(venv_python()), "-c", "pass"], check=True)
        interpreter = (time.perf_counter() - start) / runs
    rows = [
        ["bare client (claude -p)", ms(median(bare_s)), ms(p95(bare_s))],
        ["agent-room ask --new", ms(median(ask_s)), ms(p95(ask_s))],
        ["difference (whole process)", ms(median(ask_s) - median(bare_s)), ""],
        ["room's own part (decision, store, log)", ms(median(own_s)), ms(p95(own_s))],
        ["python -c pass (mean)", ms(interpreter), ""],
    ]
    print_table(["per ask", "median ms", "p95 ms"], rows, title=f"{runs} asks of each")
    results = {
        "runs": runs,
        "bare_median_ms": round(median(bare_s) * 1e3, 3),
        "ask_median_ms": round(median(ask_s) * 1e3, 3),
        "own_median_ms": round(median(own_s) * 1e3, 3),
        "own_p95_ms": round(p95(own_s) * 1e3, 3),
        "python_ms": round(interpreter * 1e3, 3),
    }
    write_result("intercom", results)
    failed = median(own_s) > OWN_BUDGET
    if failed:
        print(f"FAIL: the room's own part of an ask took {ms(median(own_s))} ms (budget 30)")
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
