"""The demo room's conversation: one script for the simulated agents and the real ones.

A simulated agent "thinks" with this script and a real Claude Code gets it from the
model stand-in, so both demos tell the same story: @backend publishes an API to
@frontend, and once @frontend answers hands it the next piece of work (the handover waits
for the operator),
@infra reports to @backend, @mobile asks to run a command outside its allowed tools
and sits in a permission dialog until someone answers it (a message @infra sends it
meanwhile waits in the room), and the director keeps a
little traffic going with pings. Rules key off what the agent is shown (its prompt,
the messages its hooks hand over, or a tool result), never off a turn count.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_room.demo.model_api import ModelApi, Reply, Rule, Script

AGENTS = ("backend", "frontend", "infra", "mobile")
"""The demo's agents, in the order they start."""
OTHER_AGENTS = {"codex": "reviewer", "gemini": "docs"}
"""The agents ``demo --codex`` / ``--gemini`` add, by the client each one runs."""

PROMPTS = {
    "backend": "DEMO-BACKEND: publish the tasks API for frontend",
    "infra": "DEMO-INFRA: bring staging up and tell backend",
    "mobile": "DEMO-MOBILE: run the database migration",
}
LATER = ("infra", "DEMO-INFRA: tell mobile the migration can run on staging")
"""Typed once @mobile sits in its dialog: a message the room must hold until it closes."""
"""What the operator types into each agent when the demo starts, in this order. No prompt
ends in an ``@name``: Claude Code opens a completion menu there, and Enter would pick from
it instead of submitting."""

PING = "DEMO-PING to"
"""A prompt ``DEMO-PING to NAME`` makes the agent send @NAME a status line."""

API = "GET /tasks is live: [{ id, title, done }] (paged, 50 per page)"
STAGING = "Staging is ready for the migration: run it against postgres://staging:5432/tasks"
ACK = "Thanks: wiring GET /tasks into the list view"
MIGRATION = "touch migration.done"
"""Outside ``Bash(agent-room:*)``: the client asks for permission first."""


def _handover() -> str:
    return (
        'agent-room send @frontend --handover --changed "Added GET /tasks and PATCH /tasks/:id"'
        ' --files "api/tasks.py; api/schema.py" --todo "Build the task list view"'
        ' --contract "Task = { id: string, title: string, done: boolean }" --breaking none'
    )


def _rules() -> list[Rule]:
    rules = [
        # first: the approved handover carries context from @backend's transcript, which
        # quotes the earlier prompts and messages the rules below key off
        Rule(
            "Build the task list view",
            Reply("On it: building the task list view against GET /tasks."),
        ),
        Rule(
            PROMPTS["backend"],
            Reply("Publishing the API.", bash=f'agent-room send @frontend "{API}"'),
        ),
        Rule(
            PROMPTS["infra"],
            Reply(
                "Staging is up.",
                bash='agent-room send @backend "Staging database is up: postgres://staging:5432/tasks"',
            ),
        ),
        Rule(PROMPTS["mobile"], Reply("The migration needs a shell command.", bash=MIGRATION)),
        Rule(LATER[1], Reply(bash=f'agent-room send @mobile "{STAGING}"')),
        Rule(API, Reply("Wiring it in.", bash=f'agent-room send @backend "{ACK}"')),
        Rule(ACK, Reply("Handing the list view over.", bash=_handover())),
    ]
    for name in (*AGENTS, *OTHER_AGENTS.values()):
        rules.append(
            Rule(
                f"{PING} {name}",
                Reply(bash=f'agent-room send @{name} "status: tests green, nothing blocking"'),
            )
        )
    return rules


def demo_script() -> Script:
    """A fresh script with the demo's rules."""
    return Script(_rules())


SCRIPTS: dict[str, Callable[[], Script]] = {"demo": demo_script}
"""Scripts by name, for ``python -m agent_room.demo.conversation --script NAME``."""


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a named script until killed; write the base URL to ``--url-file``."""
    parser = argparse.ArgumentParser(prog="python -m agent_room.demo.conversation")
    parser.add_argument("--script", choices=sorted(SCRIPTS), default="demo")
    parser.add_argument("--url-file", type=Path, required=True)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args(argv)
    api = ModelApi(SCRIPTS[args.script](), log=args.log).start()
    partial = args.url_file.with_name(args.url_file.name + ".part")
    partial.write_text(api.url + "\n")
    partial.replace(args.url_file)  # readers never see half a URL
    print(f"model stand-in at {api.url} (script {args.script})", file=sys.stderr, flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
