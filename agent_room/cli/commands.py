"""The commands of ``agent-room``: their tasks, one-line summaries and where each lives.

``agent-room --help`` is printed from this table alone, without loading a command's
module (pip keeps its commands the same way): the console's and the launcher's modules
cost more to import than the help takes to print. A command's own ``--help`` begins
with its summary unless it says more. Standard library only: the argparse parser of the
commands not yet on click reads it too.
"""

from __future__ import annotations


class Command:
    """One top-level command. A plain class: every command reads this table as it starts,
    and ``dataclasses`` would load ``inspect`` (some 5 ms) for it."""

    __slots__ = ("module", "summary")

    def __init__(self, summary: str, module: str | None = None) -> None:
        self.summary = summary
        """One line, lower case, no full stop: what the command is for."""
        self.module = module
        """The module defining its click command (``NAME_command``) beside the handlers;
        None while the command is still defined in ``cli.parser`` (argparse)."""


_LINKS = "agent_room.cli.links"
_MEMORY = "agent_room.cli.memory"
_ASK = "agent_room.cli.ask"
_USAGE = "agent_room.cli.usage"

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
            "join": Command("register a name by hand (an agent in a pane without hooks)"),
            "leave": Command("remove a name from the room"),
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
            "inbox": Command("read your unread messages"),
            "history": Command("the room's last messages"),
            "handovers": Command("list the handovers waiting for a decision"),
            "approve": Command("approve a pending handover"),
            "reject": Command("reject a pending handover, with a reason"),
        },
    ),
    (
        "See the room",
        {
            "console": Command(
                "the full-screen console (also: agent-room alone)", "agent_room.cli.console"
            ),
            "who": Command("the sessions in the room"),
            "tree": Command("the session tree: who descends from whom"),
            "peek": Command(
                "read an agent's last turns from its transcript", "agent_room.cli.sessions"
            ),
            "status": Command("one short line for a status bar, e.g. tmux status-right"),
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
                "tokens and cost of the agents over a span (default: today, UTC)", _USAGE
            ),
            "budget": Command(
                "what an agent or the room may spend per day; at 100 % its prompts wait", _USAGE
            ),
        },
    ),
    (
        "Links, timers and loops",
        {
            "link": Command("freeze, thaw or close a link; the room's link settings", _LINKS),
            "links": Command("the links: open, frozen, closed, crossings left", _LINKS),
            "timer": Command("set a timer with intent (anchor, check, wait) or cancel one", _LINKS),
            "timers": Command("the pending timers (--all: fired and cancelled too)", _LINKS),
            "loops": Command(
                "what the loop and turn breakers hold (messages, prompts); release or drop it",
                "agent_room.cli.loops",
            ),
        },
    ),
    (
        "Ask an agent in another repository",
        {
            "ask": Command("ask a headless agent in another repository", _ASK),
            "intercom": Command("the intercom's sessions per repository, with costs", _ASK),
        },
    ),
    (
        "The room's memory",
        {
            "ledger": Command("the collaboration ledger: every handover and its outcome", _MEMORY),
            "checkpoint": Command("take a resume checkpoint of the agent NAME", _MEMORY),
            "checkpoints": Command("the resume checkpoints (of NAME); their retention", _MEMORY),
            "resume": Command("start an agent from a checkpoint, or print its context", _MEMORY),
            "entities": Command(
                "the shared entity registry: files, endpoints, contracts ... and who named them",
                _MEMORY,
            ),
            "memory": Command("the memory's settings: a handover context's budget", _MEMORY),
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


def summary(name: str) -> str:
    """``name``'s one line, escaped for argparse (which formats its help with ``%``)."""
    return COMMANDS[name].summary.replace("%", "%%")
