"""``agent-room start`` and ``stop`` on click; their handlers are ``cli.launcher``'s.

Apart from the launcher only for its size. ``start NAME [options] -- AGENT-ARGS``: what
follows the first ``--`` goes to the agent verbatim, options and all.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from agent_room.cli.launcher import AGENT_KINDS, StartOptions, cmd_start, cmd_stop
from agent_room.cli.params import no_watch_option


class AgentArgs(click.Command):
    """A command whose words after the first ``--`` are ``agent_args``, untouched."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the words before ``--``; keep those after it for the agent."""
        tail: list[str] = []
        if "--" in args:
            at = args.index("--")
            args, tail = args[:at], args[at + 1 :]
        rest = super().parse_args(ctx, args)
        ctx.params["agent_args"] = tail
        return rest

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        """The usage ends with the agent's own arguments."""
        return [*super().collect_usage_pieces(ctx), "[-- AGENT-ARGS ...]"]


@click.command("start", cls=AgentArgs)
@click.argument("name", metavar="NAME", help="its name in the room (after --: its own arguments)")
@click.option("--cwd", metavar="DIR", help="where the agent works (default: here)")
@click.option(
    "--worktree",
    is_flag=False,
    flag_value="",
    metavar="[BRANCH]",
    help="work in a git worktree of --cwd's repository of its own, on BRANCH"
    " (default: the agent's name); one it has already is reused",
)
@click.option(
    "--agent",
    default="claude",
    type=click.Choice(AGENT_KINDS),
    help="claude (default; with the plugin), codex, gemini, or command: run AGENT-ARGS",
)
@click.option("--agent-kind", metavar="LABEL", help="the kind the room records")
@click.option("--detach", is_flag=True, help="do not attach, nor open a window inside tmux")
@no_watch_option
def start_command(
    name: str,
    cwd: str | None,
    worktree: str | None,
    agent: str,
    agent_kind: str | None,
    detach: bool,
    no_watch: bool,
    agent_args: Sequence[str],
) -> int:
    return cmd_start(
        StartOptions(
            name=name,
            cwd=cwd,
            worktree=worktree,
            agent=agent,
            agent_kind=agent_kind,
            detach=detach,
            no_watch=no_watch,
            agent_args=agent_args,
        )
    )


@click.command("stop")
@click.argument("name", metavar="NAME", help="the name it was started as")
@click.option(
    "--remove-worktree",
    is_flag=True,
    help="also remove its worktree (refused while it holds work not merged anywhere)",
)
@click.option("--force", is_flag=True, help="with --remove-worktree: remove it all the same")
def stop_command(name: str, remove_worktree: bool, force: bool) -> int:
    return cmd_stop(name=name, remove_worktree=remove_worktree, force=force)
