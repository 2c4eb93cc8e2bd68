"""Codex CLI run headless for ``agent-room ask``: ``codex exec --json`` in a repository.

The same process handling as Claude Code's (``adapters.claude``): stdin closed, its own
process group ended with its tools on a timeout. Its JSONL events are handed back as the
answer object ``claude -p`` prints (``core.clients.codex_exec_answer``); a session
resumes with ``codex exec resume ID``. Codex has no turn limit to pass.
"""

from __future__ import annotations

import json

from agent_room.adapters.claude import Headless, Run, run_headless
from agent_room.turn.core.clients import codex_exec_answer


class CodexHeadless(Headless):
    """A ``HeadlessClient`` over the Codex CLI."""

    def argv(self, prompt: str, *, resume: str | None) -> list[str]:
        """The command line of one ask (the prompt last, after ``--``)."""
        argv = [self.binary, "exec", *(["resume"] if resume else [])]
        argv += ["--json", "--skip-git-repo-check", *self.args]
        return [*argv, *([resume] if resume else []), "--", prompt]

    def run(
        self, cwd: str, prompt: str, *, resume: str | None, max_turns: int, timeout: float
    ) -> Run:
        """Ask once; on ``timeout`` end the client's whole process group."""
        del max_turns  # Codex has no such limit
        returncode, out, err = run_headless(
            self.argv(prompt, resume=resume),
            cwd=cwd,
            env=self.env,
            timeout=timeout,
            install="install Codex CLI or set AGENT_ROOM_CODEX",
        )
        if returncode is None:
            return Run(None, "", err.decode(errors="replace"))
        answer = codex_exec_answer(out.decode(errors="replace"))
        text = json.dumps(answer) if "session_id" in answer else out.decode(errors="replace")
        return Run(returncode, text, err.decode(errors="replace"))
