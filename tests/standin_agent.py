"""A small program standing in for an agent in a tmux pane: it fires the real hooks.

It behaves like Claude Code as far as the room can see: SessionStart when it starts;
for every line typed at its prompt, UserPromptSubmit (printing any context the hook
hands over), then Stop with its reply as ``last_assistant_message`` (and if the Stop hook
blocks, it prints the reason and stops again, as the real client continues the turn);
SessionEnd on end of input. Run: ``python standin_agent.py [--session-id ID]``.
A line ``/permission`` simulates an open permission dialog until the next line;
``/work N`` keeps the turn busy for N seconds before it stops; ``/say TEXT`` makes TEXT
the turn's final output; ``--transcript PATH`` writes the turn's records there as Claude
Code does (the prompt, the answer, the end of its Stop hooks); ``--nudge-reply
TEXT`` the final output of every turn a room nudge starts and of every continuation
after a Stop block (default: the echo, and "Read the handed-over messages."); and
``--answer MARK=TEXT`` (repeatable) answers TEXT instead when what the room handed
over has MARK in it (the first that matches).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from typing import Any


def fire(event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Run ``agent-room hook EVENT`` the way the plugin does; return its JSON output."""
    payload = {**payload, "hook_event_name": event}
    proc = subprocess.run(
        [sys.executable, "-m", "agent_room", "hook", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=False,
    )
    text = proc.stdout.decode().strip()
    return json.loads(text) if text else None


def main() -> None:
    """Run the stand-in until end of input."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--session-id", default=str(uuid.uuid4()))
    parser.add_argument("--nudge-reply", default=None, help="final output of nudged turns")
    parser.add_argument("--transcript", default=None, help="write a transcript there")
    parser.add_argument("--answer", action="append", default=[], help="MARK=TEXT")
    args = parser.parse_args()
    base = {
        "session_id": args.session_id,
        "transcript_path": args.transcript or f"/tmp/standin/{args.session_id}.jsonl",
        "cwd": os.getcwd(),
    }

    def record(entry: dict[str, Any]) -> None:
        """Append a record to the transcript as Claude Code does (given --transcript)."""
        if args.transcript:
            with open(args.transcript, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({**entry, "sessionId": args.session_id}) + "\n")

    answers = [a.partition("=")[::2] for a in args.answer]

    def answer(handed: str, fallback: str) -> str:
        return next((text for mark, text in answers if mark in handed), fallback)

    out = fire("SessionStart", {**base, "source": "startup"})
    if out:
        print(out["hookSpecificOutput"]["additionalContext"], flush=True)
    while True:
        try:
            line = input("> ")
        except EOFError:
            break
        if line.strip() == "/permission":
            fire(
                "Notification",
                {
                    **base,
                    "notification_type": "permission_prompt",
                    "message": "needs your permission",
                },
            )
            print("PERMISSION? (waiting)", flush=True)
            try:
                input()
            except EOFError:
                break
            print("PERMISSION answered", flush=True)
        out = fire("UserPromptSubmit", {**base, "prompt": line, "prompt_id": str(uuid.uuid4())})
        record({"type": "user", "message": {"role": "user", "content": line}})
        print(f"PROMPT: {line}", flush=True)
        if out:
            print(
                "CONTEXT: " + out["hookSpecificOutput"]["additionalContext"].replace("\n", " | "),
                flush=True,
            )
        if line.startswith("/work "):
            print("WORKING", flush=True)
            time.sleep(float(line.split()[1]))
        reply = f"Echo: {line}"
        if line.startswith("/say "):
            reply = line.removeprefix("/say ")
        elif args.nudge_reply is not None and line.startswith("[agent-room]"):
            reply = args.nudge_reply
        if out and line.startswith("[agent-room]"):
            reply = answer(out["hookSpecificOutput"]["additionalContext"], reply)
        while True:
            text = [{"type": "text", "text": reply}]
            record({"type": "assistant", "message": {"content": text, "stop_reason": "end_turn"}})
            stop = fire(
                "Stop", {**base, "last_assistant_message": reply, "stop_hook_active": False}
            )
            record({"type": "system", "subtype": "stop_hook_summary"})
            if not stop or stop.get("decision") != "block":
                break
            print("BLOCKED: " + stop["reason"].replace("\n", " | "), flush=True)
            reply = answer(
                stop["reason"],
                args.nudge_reply
                if args.nudge_reply is not None
                else "Read the handed-over messages.",
            )
    fire("SessionEnd", {**base, "reason": "prompt_input_exit"})


if __name__ == "__main__":
    main()
