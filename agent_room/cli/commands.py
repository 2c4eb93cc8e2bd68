"""The commands of ``agent-room``: their tasks, one-line summaries and where each lives.

``agent-room --help`` is printed from this table alone, without loading a command's
module (pip keeps its commands the same way): the console's and the launcher's modules
cost more to import than the help takes to print. A command's own ``--help`` begins
with its summary unless it says more.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """One top-level command."""

    summary: str
    """One line, lower case, no full stop: what the command is for."""
    module: str
    """The module defining its click command (``NAME_command``), beside its handler."""


TASKS: tuple[tuple[str, dict[str, Command]], ...] = (
    (
        "Start and stop agents",
        {
            "start": Command(
                "start an agent in tmux session ac-NAME, in the room", "agent_room.cli.start"
            ),
            "stop": Command(
                "stop the agent started as NAME and close its tmux", "agent_room.cli.start"
            ),
            "join": Command(
                "register a name by hand (an agent in a pane without hooks)",
                "agent_room.cli.members",
            ),
            "leave": Command("remove a name from the room", "agent_room.cli.members"),
            "rename": Command(
                "rename a session in the room; its unread messages follow",
                "agent_room.cli.sessions",
            ),
            "enter": Command(
                "jump into an agent: its live tmux pane, or resume its ended session",
                "agent_room.cli.enter",
            ),
            "exit-agent": Command(
                "go back to where you entered this agent from", "agent_room.cli.enter"
            ),
        },
    ),
    (
        "Messages and handovers",
        {
            "send": Command("send a directed message to @NAME", "agent_room.cli.send"),
            "inbox": Command("read your unread messages", "agent_room.cli.messages"),
            "history": Command("the room's last messages", "agent_room.cli.messages"),
            "handovers": Command(
                "list the handovers waiting for a decision", "agent_room.cli.handovers"
            ),
            "approve": Command("approve a pending handover", "agent_room.cli.handovers"),
            "reject": Command(
                "reject a pending handover, with a reason", "agent_room.cli.handovers"
            ),
        },
    ),
    (
        "See the room",
        {
            "console": Command(
                "the full-screen console (also: agent-room alone)", "agent_room.cli.console"
            ),
            "who": Command("the sessions in the room", "agent_room.cli.who"),
            "tree": Command("the session tree: who descends from whom", "agent_room.cli.who"),
            "peek": Command(
                "read an agent's last turns from its transcript", "agent_room.cli.sessions"
            ),
            "status": Command(
                "one short line for a status bar, e.g. tmux status-right",
                "agent_room.cli.status",
            ),
            "popup": Command(
                "open the console in a tmux popup over this window", "agent_room.cli.reach"
            ),
            "notify": Command(
                "what needs the operator now; test the channels", "agent_room.cli.reach"
            ),
            "serve": Command(
                "serve the console to a web browser (textual-serve)", "agent_room.cli.serve"
            ),
        },
    ),
    (
        "Code and cost",
        {
            "diff": Command(
                "what an agent changed: since its base, committed and not",
                "agent_room.cli.worktrees",
            ),
            "usage": Command(
                "tokens and cost of the agents over a span (default: today, UTC)",
                "agent_room.cli.usage",
            ),
            "budget": Command(
                "what an agent or the room may spend per day; at 100 % its prompts wait",
                "agent_room.cli.usage",
            ),
        },
    ),
    (
        "Links, timers and loops",
        {
            "link": Command(
                "freeze, thaw or close a link; the room's link settings", "agent_room.cli.links"
            ),
            "links": Command(
                "the links: open, frozen, closed, crossings left", "agent_room.cli.links"
            ),
            "timer": Command(
                "set a timer with intent (anchor, check, wait) or cancel one",
                "agent_room.cli.links",
            ),
            "timers": Command(
                "the pending timers (--all: fired and cancelled too)", "agent_room.cli.links"
            ),
            "loops": Command(
                "what the loop and turn breakers hold (messages, prompts); release or drop it",
                "agent_room.cli.loops",
            ),
        },
    ),
    (
        "Ask an agent in another repository",
        {
            "ask": Command("ask a headless agent in another repository", "agent_room.cli.ask"),
            "intercom": Command(
                "the intercom's sessions per repository, with costs", "agent_room.cli.ask"
            ),
        },
    ),
    (
        "The room's memory",
        {
            "ledger": Command(
                "the collaboration ledger: every handover and its outcome", "agent_room.cli.memory"
            ),
            "checkpoint": Command(
                "take a resume checkpoint of the agent NAME", "agent_room.cli.memory"
            ),
            "checkpoints": Command(
                "the resume checkpoints (of NAME); their retention", "agent_room.cli.memory"
            ),
            "resume": Command(
                "start an agent from a checkpoint, or print its context", "agent_room.cli.memory"
            ),
            "entities": Command(
                "the shared entity registry: files, endpoints, contracts ... and who named them",
                "agent_room.cli.memory",
            ),
            "memory": Command(
                "the memory's settings: a handover context's budget", "agent_room.cli.memory"
            ),
        },
    ),
    (
        "Set up and look after the room",
        {
            "doctor": Command(
                "check what the room needs and say how to fix it", "agent_room.cli.doctor"
            ),
            "watch": Command(
                "deliver messages to idle agents (headless worker)", "agent_room.cli.watch"
            ),
            "mcp": Command(
                "the room's tools for an agent over MCP on stdio (relayed to the room's server)",
                "agent_room.cli.mcp",
            ),
            "plugin": Command(
                "the Claude Code plugin shipped with agent-room", "agent_room.cli.plugin"
            ),
            "tmux": Command(
                "tmux key bindings and the status line for agent-room", "agent_room.cli.reach"
            ),
            "transport": Command(
                "show or choose how messages reach agents: native-first, tmux, native",
                "agent_room.cli.outside",
            ),
            "room": Command(
                "the room itself: copy a SQLite room into PostgreSQL", "agent_room.cli.room_copy"
            ),
        },
    ),
    (
        "Try it",
        {
            "demo": Command(
                "a demo room to watch: four simulated agents in tmux, and the console",
                "agent_room.cli.demo",
            )
        },
    ),
)
"""``agent-room --help`` lists the commands by task, in this order."""

COMMANDS: dict[str, Command] = {name: c for _, group in TASKS for name, c in group.items()}
"""Every top-level command by name."""
