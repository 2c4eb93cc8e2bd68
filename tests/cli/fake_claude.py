"""A stand-in for ``claude -p --output-format json`` in the intercom's CLI tests.

Like the real client it reads stdin to its end when stdin is not a terminal (which is
what made the seed's ``$(claude -p ...)`` hang), so a caller that passes its own stdin on
hangs here too. It logs each run (argv, cwd, stdin, the room's variables) as one JSON
line to ``$FAKE_CLAUDE_LOG`` and answers as ``$FAKE_CLAUDE_MODE`` says:

- ``ok`` (default): one result object; ``array``: the verbose array of events;
- ``error``: a result with ``is_error``; ``exit``: status 3 and a line on stderr;
- ``sleep``: start a grandchild (its pid in the log) and sleep, for timeouts;
- ``unknown``: refuse any ``--resume`` as the real client does ("No conversation found").

``$FAKE_CLAUDE_DELAY`` seconds are slept before answering; the cost reported is
``$FAKE_CLAUDE_COST`` (default 0.01) per run, added up over a session as the real client
does on a resume.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid


def main() -> int:
    args = sys.argv[1:]
    stdin_source = os.readlink("/proc/self/fd/0")
    piped = sys.stdin.read() if not sys.stdin.isatty() else ""
    mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
    resume = args[args.index("--resume") + 1] if "--resume" in args else None
    prompt = args[-1]
    entry: dict[str, object] = {
        "argv": args,
        "cwd": os.getcwd(),
        "stdin": stdin_source,
        "piped": piped,
        "prompt": prompt,
        "resume": resume,
        "env": {k: v for k, v in os.environ.items() if k.startswith(("AGENT_ROOM", "CLAUDE"))},
        "tmux": "TMUX" in os.environ or "TMUX_PANE" in os.environ,
        "pgid": os.getpgid(0),
        "pid": os.getpid(),
    }
    if mode == "sleep":
        child = subprocess.Popen(["sleep", "300"])
        entry["grandchild"] = child.pid
    _log(entry)
    time.sleep(float(os.environ.get("FAKE_CLAUDE_DELAY", "0")))
    if mode == "sleep":
        time.sleep(300)
    if mode == "exit":
        print("the model is overloaded", file=sys.stderr)
        return 3
    if mode == "unknown" and resume:
        print(f"No conversation found with session ID: {resume}", file=sys.stderr)
        return 1
    session = resume or str(uuid.uuid4())
    runs = 1 + _earlier_runs(session)
    cost = float(os.environ.get("FAKE_CLAUDE_COST", "0.01"))
    result: dict[str, object] = {
        "type": "result",
        "subtype": "error_during_execution" if mode == "error" else "success",
        "is_error": mode == "error",
        "duration_ms": 12,
        "num_turns": 2,
        "result": "the model failed" if mode == "error" else f"answer to: {prompt}",
        "session_id": session,
        "total_cost_usd": round(cost * runs, 6),
    }
    _log({"session": session})
    if mode == "max_turns":  # as Claude Code 2.1.330 prints it: no result, exit status 1
        del result["result"]
        result.update(
            subtype="error_max_turns",
            is_error=True,
            terminal_reason="max_turns",
            errors=["Reached maximum number of turns (1)"],
        )
        print(json.dumps(result))
        return 1
    if mode == "array":
        events = [{"type": "system", "subtype": "init", "session_id": session}, result]
        print(json.dumps(events))
    else:
        print(json.dumps(result))
    return 0


def _log(entry: dict[str, object]) -> None:
    path = os.environ.get("FAKE_CLAUDE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def _earlier_runs(session: str) -> int:
    path = os.environ.get("FAKE_CLAUDE_LOG")
    if not path or not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    return sum(1 for line in lines if line.get("session") == session)


if __name__ == "__main__":
    sys.exit(main())
