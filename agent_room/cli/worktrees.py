"""Worktrees and diffs on the command line: ``diff``, ``handovers show``, and the parts
of ``start``, ``stop``, ``send --handover``, ``approve``, ``who`` and ``tree`` that
concern an agent's branch.

Kept in one module beside the commands they extend, so those stay as they were for
agents without a worktree and git is loaded only where an agent has one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agent_room.adapters.git import GitCli
from agent_room.cli.output import print_json
from agent_room.cli.params import MESSAGE_ID, json_option
from agent_room.core.worktrees import Worktree
from agent_room.room.base import RoomBase
from agent_room.room.worktrees import Worktrees, approve_with_code, stat_lines
from agent_room.store import memory
from agent_room.turn.core.errors import BadInput, NotFound
from agent_room.turn.core.names import parse_name
from agent_room.turn.core.printable import printable
from agent_room.turn.room.service import RoomCore

if TYPE_CHECKING:  # approve's room decides: the whole room, which the rest does without
    from agent_room.room.service import Room


def _worktrees(room: RoomBase) -> Worktrees:
    return Worktrees(room, GitCli())


# -- start / stop -------------------------------------------------------------------------


def start_worktree(name: str, cwd: Path, branch: str | None) -> tuple[Path, str]:
    """Make (or reuse) ``name``'s worktree of the repository at ``cwd``; return the
    folder the agent starts in and what to say about it."""
    room = RoomCore.open(os.environ)
    try:
        worktree, reused = _worktrees(room).make(name, str(cwd), branch or None)
    finally:
        room.close()
    how = "reusing" if reused else "new"
    base = worktree.base_branch or "a detached HEAD"
    said = (
        f"{how} worktree {worktree.path} on branch {worktree.branch}"
        f" (base {base} at {worktree.base_commit[:10]})"
    )
    return Path(worktree.path), printable(said)


def check_removal(name: str, *, force: bool) -> Worktree:
    """Before ``stop --remove-worktree`` stops anything: the worktree to remove, refused
    now if it holds work not merged anywhere (nothing is stopped then)."""
    room = RoomCore.open(os.environ)
    try:
        return _worktrees(room).removable(name, force=force)
    finally:
        room.close()


def remove_worktree(name: str, *, force: bool) -> str:
    """Remove the agent's worktree now that it is stopped; say what was done."""
    room = RoomCore.open(os.environ)
    try:
        return _worktrees(room).remove(name, force=force)
    finally:
        room.close()


# -- send --handover / approve ---------------------------------------------------------------


def approve(room: Room, message_id: int) -> int:
    """Approve, telling the recipient how to take the code the handover carries."""
    return approve_with_code(room, GitCli(), message_id)


# -- diff -----------------------------------------------------------------------------------


def cmd_diff(*, name: str, file: str | None, stat: bool, as_json: bool) -> int:
    """``agent-room diff NAME [--stat] [--json] [FILE]``."""
    agent = parse_name(name)
    room = RoomCore.open(os.environ)
    try:
        worktrees = _worktrees(room)
        changes = worktrees.changes(agent)
        if file:
            text = worktrees.file_diff(agent, file)
            sys.stdout.write(printable(text, multiline=True))
            return 0
        patch = "" if stat or as_json else worktrees.patch(changes)
    finally:
        room.close()
    if as_json:
        print_json(changes.as_dict())
        return 0
    where = f"@{agent}'s worktree {changes.checkout}" if changes.worktree else changes.checkout
    print(f"{printable(where)}, against {printable(changes.base)}", file=sys.stderr)
    if not changes.worktree:
        others = ", ".join(f"@{n}" for n in changes.shared_with)
        shared = f": shared with {others}" if others else ""
        print(
            f"@{agent} works in a plain checkout: these are the working tree's changes,"
            f" everyone's who works there{shared}",
            file=sys.stderr,
        )
    if not changes.files:
        print("no changes", file=sys.stderr)
        return 0
    if stat:
        sys.stdout.write(printable("\n".join(stat_lines(changes)) + "\n", multiline=True))
    else:
        sys.stdout.write(printable(patch, multiline=True))
    return 0


# -- handovers show -------------------------------------------------------------------------


def cmd_handover_show(*, id: int, as_json: bool) -> int:
    """``agent-room handovers show ID``: the handover as the console previews it (its
    body, the context prepared from the sender's transcript) and the code it carries
    against the recipient's branch (files, whether it merges cleanly)."""
    room = RoomCore.open(os.environ)
    try:
        row = room.store.handover(id)
        if row is None:
            raise NotFound(f"no handover #{id}")
        message = room.store.message(id)
        context = memory.context(room.store, id)
        preview = _worktrees(room).preview(row)
    finally:
        room.close()
    body = str(message["body"]) if message else ""
    if as_json:
        fields = row.get("fields")
        print_json(
            {
                "id": id,
                "sender": row["sender"],
                "recipient": row["recipient"],
                "state": row["state"],
                "body": body,
                "fields": json.loads(fields) if isinstance(fields, str) else fields,
                "context": context["text"] if context else None,
                "code": preview.as_dict() if preview else None,
            }
        )
        return 0
    head = f"#{id}  @{row['sender']} -> @{row['recipient']}  ({row['state']})"
    if context is not None:
        prepared = (
            f"--- context prepared from @{row['sender']}'s transcript"
            f" ({context['tokens']} tokens)\n{context['text']}"
        )
    else:
        prepared = "--- no context prepared (yet)"
    code = preview.text() if preview else None
    code = code or "code: none recorded (the sender was not in a git repository)"
    text = "\n".join([head, "", body, "", prepared, "", code])
    sys.stdout.write(printable(text + "\n", multiline=True))
    return 0


def previews(room: RoomBase, rows: list[dict[str, object]]) -> dict[int, dict[str, object] | None]:
    """Each pending handover's code preview for ``handovers --json``."""
    worktrees = _worktrees(room)
    found: dict[int, dict[str, object] | None] = {}
    for row in rows:
        preview = worktrees.preview(dict(row))
        found[int(str(row["message_id"]))] = preview.as_dict() if preview else None
    return found


def check_force(*, force: bool, remove_worktree: bool) -> None:
    """``--force`` only means something with ``--remove-worktree``."""
    if force and not remove_worktree:
        raise BadInput("--force goes with --remove-worktree (it drops the worktree's work)")


# The command diff (loaded by cli.app when they run).


@click.command("diff")
@click.argument("name", metavar="NAME", help="the agent")
@click.argument("file", metavar="FILE", required=False, help="only this file's patch")
@click.option("--stat", is_flag=True, help="files with lines added and removed")
@click.option("--json", "as_json", is_flag=True, help="print JSON (files and counts)")
def diff_command(name: str, file: str | None, stat: bool, as_json: bool) -> int:
    return cmd_diff(name=name, file=file, stat=stat, as_json=as_json)


@click.command("show")
@click.argument("id", metavar="ID", type=MESSAGE_ID, help="the handover's id")
@json_option
def handover_show_command(id: int, as_json: bool) -> int:
    """One handover in full: its body, prepared context and code against the recipient."""
    return cmd_handover_show(id=id, as_json=as_json)
