"""The simulated agent's pane shows what the room hands it escaped, like the console does.

Its own bold and dim are the only escape sequences it prints: a message body handed over
as context, a Stop hook's reason and the model's text are shown with ``core.printable``.
The hooks are faked here (a unit test); the real hooks run in the tmux demo tests.
"""

from __future__ import annotations

import io
import re
from typing import Any

from agent_room.demo.model_api import Reply, Rule, Script
from agent_room.demo.simulator import BOLD, DIM, RESET, Simulator

HOSTILE = "body \x1b]2;pwned\x07 \x1b[2J back\r \x9b \u202e end\nline two"
ACTED_ON = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class _Hooked(Simulator):
    """The hooks answer with hostile text once: context on submit, one block on Stop."""

    blocked = False

    def fire(self, event: str, **fields: Any) -> dict[str, Any] | None:
        if event == "UserPromptSubmit":
            return {"hookSpecificOutput": {"additionalContext": HOSTILE}}
        if event == "Stop" and not self.blocked:
            self.blocked = True
            return {"decision": "block", "reason": HOSTILE}
        return None


def test_context_feedback_and_answers_are_shown_escaped() -> None:
    out = io.StringIO()
    script = Script([Rule("hello", Reply(HOSTILE), after_tool=False)])
    _Hooked(script, cwd="/srv/x", out=out).turn("hello")
    shown = out.getvalue()
    for own in (BOLD, DIM, RESET):
        shown = shown.replace(own, "")
    assert not ACTED_ON.search(shown), shown
    # the context, the Stop hook's reason, and the answer to each
    assert shown.count("body \\x1b]2;pwned\\x07 \\x1b[2J back\\r \\x9b \\u202e end") >= 3
