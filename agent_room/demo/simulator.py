"""A simulated agent for the demo room: fires the same hooks as Claude Code, in its pane.

It behaves the way the room sees a real client: SessionStart when it starts; for each
line typed at its prompt (by the operator, the demo's director or the delivery worker's
nudge), UserPromptSubmit, whose additional context (the handed-over messages) it reads
like a model would; then it "thinks" with the demo's conversation script (the same
rules the model stand-in answers a real client with), runs the Bash commands the script
asks for — only ``agent-room ...`` ones for real, which are its allowed tools — and ends
the turn with Stop and ``last_assistant_message``. A Stop block's reason is a new user
message, as in the real client. A command outside the allowed tools opens a permission
dialog (Notification ``permission_prompt``) that waits for a line typed into the pane:
Enter allows it, ``n`` denies it. End of input ends the session (SessionEnd). Payloads
have the shapes of tests/fixtures/claude-code-2.1.330; the hook's environment carries
``CLAUDE_PID`` and ``CLAUDE_CODE_SESSION_ID`` as 2.1.330 sets them.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from agent_room.adapters.install import agent_room_command
from agent_room.demo.conversation import SCRIPTS
from agent_room.demo.model_api import Script
from agent_room.turn.core.printable import printable

ALLOWED = "agent-room"
"""The only command the agents may run without asking (``Bash(agent-room:*)``)."""
MAX_STEPS = 8
"""Tool calls per turn at most: a script that loops still ends its turn."""
BOLD, DIM, RESET = "\033[1m", "\033[2m", "\033[0m"


def _agent_room() -> list[str]:
    """The ``agent-room`` the launcher named ($AGENT_ROOM_BIN), else this install's."""
    given = os.environ.get("AGENT_ROOM_BIN", "")
    if given and os.access(given, os.X_OK):
        return [given]
    return agent_room_command()


class Simulator:
    """One simulated agent session."""

    def __init__(
        self,
        script: Script,
        *,
        session_id: str | None = None,
        cwd: str | None = None,
        out: TextIO = sys.stdout,
        answer_after: float | None = None,
        transcripts: Path | None = None,
    ) -> None:
        self.script = script
        self.answer_after = answer_after
        """Seconds after which the simulated user allows an open dialog (None: never)."""
        self.session_id = session_id or str(uuid.uuid4())
        self.cwd = cwd or str(Path.cwd())
        self.out = out
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.transcripts = transcripts
        """Where to keep a transcript (None: the hooks get a path, nothing is written)."""
        folder = transcripts or Path(self.cwd) / ".claude-transcripts"
        self.transcript = folder / f"{self.session_id}.jsonl"
        self.prompt_id = ""

    # -- the hooks ---------------------------------------------------------------------

    def fire(self, event: str, **fields: Any) -> dict[str, Any] | None:
        """Run ``agent-room hook EVENT`` as the plugin does; return its JSON output."""
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": self.cwd,
            **({"prompt_id": self.prompt_id} if self.prompt_id else {}),
            "hook_event_name": event,
            **fields,
        }
        env = {
            **os.environ,
            "CLAUDE_PID": str(os.getpid()),
            "CLAUDE_CODE_SESSION_ID": self.session_id,
            "CLAUDECODE": "1",
        }
        proc = subprocess.run(
            [*_agent_room(), "hook", event],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            check=False,
        )
        text = proc.stdout.decode().strip()
        try:
            found = json.loads(text) if text else None
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    def _log(self, role: str, text: str) -> None:
        """A transcript line in the client's shape, so transcript readers have one."""
        if self.transcripts is None:
            return
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        line = {
            "type": role,
            # as the client writes them: a prompt as a string, an answer as text blocks
            "message": {
                "role": role,
                "content": text if role == "user" else [{"type": "text", "text": text}],
            },
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        with self.transcript.open("a") as log:
            log.write(json.dumps(line) + "\n")

    # -- the pane ----------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        """Print to the pane."""
        print(text, file=self.out, flush=True)

    def read_input(self, stream: TextIO) -> None:
        """Feed typed lines to the session (a thread: typing never waits for a turn)."""
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def run(self, stream: TextIO = sys.stdin) -> None:
        """Start, answer every typed line, end at end of input."""
        threading.Thread(target=self.read_input, args=(stream,), daemon=True).start()
        name = os.environ.get("AGENT_ROOM_NAME", "agent")
        self.say(f"{BOLD}@{name}{RESET} {DIM}(a simulated agent){RESET}  {printable(self.cwd)}")
        started = self.fire("SessionStart", source="startup")
        self.say(DIM + printable(_context(started), multiline=True) + RESET)
        self.say()
        while True:
            print("\u276f ", end="", file=self.out, flush=True)
            line = self.lines.get()
            if line is None:
                break
            self.turn(line)
        self.fire("SessionEnd", reason="prompt_input_exit")

    # -- a turn ------------------------------------------------------------------------

    def turn(self, prompt: str) -> None:
        """One turn: the prompt, the hooks, the script's answers and tool calls, Stop."""
        if not prompt.strip():
            return
        self.prompt_id = str(uuid.uuid4())
        self._log("user", prompt)
        submitted = self.fire("UserPromptSubmit", prompt=prompt, permission_mode="default")
        context = _context(submitted)
        if context:
            shown = printable(context, multiline=True).replace("\n", "\n    ")
            self.say(DIM + "  \u23bf " + shown + RESET)
        final = self.think([prompt, context])
        stops = 0
        while True:
            stopped = self.fire(
                "Stop",
                permission_mode="default",
                stop_hook_active=stops > 0,
                last_assistant_message=final,
                background_tasks=[],
                session_crons=[],
            )
            if not stopped or stopped.get("decision") != "block":
                break
            stops += 1
            reason = str(stopped.get("reason", ""))
            shown = printable(reason, multiline=True).replace("\n", "\n    ")
            self.say(DIM + "  \u23bf Stop hook feedback: " + shown + RESET)
            final = self.think([f"Stop hook feedback:\n{reason}"])
        self.say()

    def think(self, shown: Sequence[str]) -> str:
        """Answer what the model is shown, running tool calls until an answer ends the turn."""
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": [{"type": "text", "text": t} for t in shown]}],
            "tools": [{"name": "Bash"}],
        }
        reply = self.script.answer(body)
        for _ in range(MAX_STEPS):
            if reply.text:
                self.say(f"\u25cf {printable(reply.text, multiline=True)}")
                self._log("assistant", reply.text)
            if reply.bash is None:
                return reply.text
            result = self.bash(reply.bash)
            body = {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "content": result}]}
                ],
                "tools": [{"name": "Bash"}],
            }
            reply = self.script.answer(body)
        return reply.text or "Stopping here."

    def bash(self, command: str) -> str:
        """Run one tool call: ``agent-room ...`` for real, anything else after permission."""
        self.say(f"\u25cf Bash({printable(command)})")
        argv = shlex.split(command)
        if argv[:1] != [ALLOWED]:
            if not self.permission(command):
                self.say("  \u23bf denied")
                return "The user doesn't want to proceed with this tool use."
            self.say(f"  \u23bf {DIM}(simulated: nothing was run){RESET}")
            return "(Bash completed with no output)"
        proc = subprocess.run(
            [*_agent_room(), *argv[1:]], capture_output=True, text=True, check=False
        )
        result = (proc.stderr + proc.stdout).strip()
        self.say("  \u23bf " + printable(result, multiline=True).replace("\n", "\n    "))
        return result

    def permission(self, command: str) -> bool:
        """A permission dialog: the hooks learn it is open; the next typed line answers it."""
        self.say("  " + "\u254c" * 60)
        self.say(f"  {printable(command)}")
        self.say(f"  {BOLD}Do you want to proceed?{RESET}  Enter: yes   n, Enter: no")
        if self.answer_after is not None:
            self.say(f"  {DIM}(the simulated user allows it in {self.answer_after:g} s){RESET}")
        self.fire(
            "Notification",
            message="Claude needs your permission to use Bash",
            notification_type="permission_prompt",
        )
        try:
            answer = self.lines.get(timeout=self.answer_after)
        except queue.Empty:
            self.say("  \u23bf allowed by the simulated user")
            return True
        if answer is None:
            self.lines.put(None)
            return False
        return not answer.strip().lower().startswith("n")


def _context(output: dict[str, Any] | None) -> str:
    if not output:
        return ""
    specific = output.get("hookSpecificOutput")
    return str(specific.get("additionalContext", "")) if isinstance(specific, dict) else ""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one simulated agent in this terminal until end of input."""
    parser = argparse.ArgumentParser(prog="python -m agent_room.demo.simulator")
    parser.add_argument("--session-id", help="default: a new uuid")
    parser.add_argument("--script", choices=sorted(SCRIPTS), default="demo")
    parser.add_argument(
        "--answer-after", type=float, metavar="S", help="allow an open dialog after S seconds"
    )
    parser.add_argument("--transcripts", type=Path, metavar="DIR", help="keep transcripts here")
    args = parser.parse_args(argv)
    Simulator(
        SCRIPTS[args.script](),
        session_id=args.session_id,
        answer_after=args.answer_after,
        transcripts=args.transcripts,
    ).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
