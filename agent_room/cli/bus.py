"""Handlers of the message-bus commands: join, leave, send, inbox, history, who, decisions."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from agent_room.cli.output import print_json
from agent_room.room import Room
from agent_room.turn.core.errors import BadInput
from agent_room.turn.core.format import format_terminal_messages, json_row
from agent_room.turn.core.names import tmux_socket_of
from agent_room.turn.core.printable import printable

# `send` in the shapes the turn path leaves (a handover, a link, a body from a file)
# runs here: what the other commands need loads inside them.

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from agent_room.room.roster import Roster
    from agent_room.turn.room.registry import Registry


def _open() -> Room:
    return Room.open(os.environ)


def _me(room: Room, as_name: str | None) -> str:
    return room.identify(
        env_name=os.environ.get("AGENT_ROOM_NAME"),
        pane=os.environ.get("TMUX_PANE"),
        as_name=as_name,
    )


def cmd_join(*, name: str, pane: str | None, agent: str | None, no_watch: bool) -> int:
    opted_out = no_watch or not pane or _deliverer_listens()
    if not opted_out:  # read before anything is written: a bad setting changes nothing
        from agent_room.config.settings import RoomSettings  # 100 ms: only when needed

        opted_out = not RoomSettings.load(os.environ).watch
    room = _open()
    socket = tmux_socket_of(os.environ.get("TMUX"))
    kind = agent or ("claude" if pane else "")  # a name alone runs no agent
    row = room.join(name, pane=pane, agent=kind, tmux_socket=socket)
    where = f" in pane {printable(row['pane'])}" if row["pane"] else ""
    if row.get("renamed_from"):
        print(f"@{row['renamed_from']}{where} is now @{row['name']}", file=sys.stderr)
        return 0
    print(f"@{row['name']} joined the room{where}", file=sys.stderr)
    if row["pane"]:  # an agent a deliverer can reach
        from agent_room.cli.background import ensure_deliverer

        ensure_deliverer(os.environ, opted_out=opted_out)
    return 0


def _deliverer_listens() -> bool:
    """Whether the room's deliverer listens already (then join needs no settings)."""
    from agent_room.turn.store.home import room_home
    from agent_room.turn.store.wake import listening

    return listening(room_home(os.environ))


def cmd_leave(*, name: str | None) -> int:
    room = _open()
    leaving = name or _me(room, None)
    room.leave(leaving)
    print(f"@{leaving} left the room", file=sys.stderr)
    return 0


def _read_body(text: Sequence[str], file: str | None, limit: int) -> str | None:
    """The body from TEXT, ``--file`` or piped stdin; ``None`` if none was given."""
    if text and file:
        raise BadInput("give the body as TEXT or --file, not both")
    if text:
        return " ".join(text)
    if file == "-" or (file is None and not sys.stdin.isatty()):
        raw = sys.stdin.buffer.read(limit + 1)
        source = "stdin"
    elif file:
        try:
            with open(file, "rb") as handle:  # noqa: PTH123 - pathlib costs 5 ms here
                raw = handle.read(limit + 1)
        except OSError as exc:
            raise BadInput(f"cannot read {file}: {exc.strerror}") from None
        source = file
    else:
        return None
    if len(raw) > limit:
        raise BadInput(f"the message body is over the limit of {limit} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"the body from {source} is not valid UTF-8 text") from None


def send_message(
    *,
    recipient: str,
    text: Sequence[str],
    file: str | None,
    handover: bool,
    changed: str,
    files: str,
    todo: str,
    contract: str,
    breaking: str,
    link: bool,
    close_link: bool,
    as_name: str | None,
) -> int:
    """Send a message, a handover or a link's opening or closing to ``recipient``."""
    from agent_room.room.outbox import SendRequest, check_fields, send

    room = _open()
    try:
        sender = _me(room, as_name)
        request = SendRequest(
            recipient,
            None,
            handover=handover,
            changed=changed,
            todo=todo,
            files=files,
            contract=contract,
            breaking=breaking,
            link=link,
            close_link=close_link,
        )
        check_fields(request)  # before a body is read from stdin
        request.body = _read_body(text, file, room.body_limit)
        sent = send(room, sender, request)
    finally:
        room.close()  # before the process ends without its teardown (cli.SHORT)
    for note in sent.notes:
        print(note, file=sys.stderr)
    if not sys.stdout.isatty():  # for a script; a terminal has it in the notes
        print(sent.message_id)
    return 0


def cmd_inbox(*, peek: bool, as_json: bool, as_name: str | None) -> int:
    room = _open()
    rows = room.inbox(_me(room, as_name), peek=peek)
    if as_json:
        print_json([json_row(r) for r in rows])
    elif rows:
        sys.stdout.write(format_terminal_messages(rows))
    else:
        print("no new messages", file=sys.stderr)
    return 0


def cmd_history(*, count: int, as_json: bool) -> int:
    room = _open()
    try:
        rows = room.history(count)
    finally:
        room.close()
    if as_json:
        print_json([json_row(r) for r in rows])
    else:
        sys.stdout.write(format_terminal_messages(rows))
    return 0


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _registry(room: Room) -> Registry:
    from agent_room.adapters.processes import SystemProbe
    from agent_room.turn.room.registry import Registry

    registry = Registry(room, SystemProbe())
    registry.refresh()
    return registry


def cmd_who(*, as_json: bool) -> int:
    from agent_room.cli.outside import outside_rows, print_outside
    from agent_room.room.roster import Roster
    from agent_room.store.views import live_worktrees

    room = _open()
    try:
        _registry(room)
        roster = Roster(room)
        others = outside_rows(room, roster.identities)
        states: dict[str, Any] = {}
        branches = None
        if live_worktrees(room.store):  # someone works in a worktree: git tells its branch
            from agent_room.cli.worktrees import branch_cells, branch_states

            states = branch_states(room) if as_json else {}
            branches = None if as_json else branch_cells(room, roster.names)
    finally:
        room.close()
    if as_json:
        sessions = roster.sessions()
        for row in sessions:
            if row["name"] in states:  # on a worktree's branch: how far from its base
                state = states[row["name"]]
                row["branch"] = state.as_dict() if state else None
        print_json(sessions + others)
        return 0
    if not roster.names:
        print("nobody is in the room", file=sys.stderr)
        print_outside(others)
        return 0
    sys.stdout.write(_who_table(roster, branches))
    _say_silent(roster.silent)
    print_outside(others)
    return 0


def _say_silent(hosts: set[str]) -> None:
    """Why sessions show as ``unknown``: their host's watch, the only judge of their
    processes, has not been heard from."""
    from agent_room.turn.store.hosts import SILENT_AFTER

    for host in sorted(hosts):
        print(
            f"host {printable(host)} is silent (no watch of it seen in {SILENT_AFTER:.0f} s):"
            " its sessions' state is unknown",
            file=sys.stderr,
        )


def _who_table(roster: Roster, branches: list[str] | None = None) -> str:
    """``who``'s table, laid out column by column: one string per cell and no object per
    session, so that 2,000 sessions cost little more than 50."""
    count = len(roster.names)
    index = dict(zip(roster.names, range(count), strict=True))
    unread = ["0"] * count
    for name in roster.unread.keys() | roster.held.keys():
        if (i := index.get(name)) is not None:
            mine, failed = roster.unread.get(name, (0, 0))
            held = roster.held.get(name, 0)
            unread[i] = (
                f"{mine}"
                + (f" ({failed} failed)" if failed else "")
                + (f" ({held} held)" if held else "")
            )
    costs = [_cost(roster, name) for name in roster.names]
    links = ["-"] * count
    if roster.links:
        from agent_room.core.links import links_summary

        for name, (live, loose) in roster.links.items():
            links[index[name]] = links_summary(live, unanchored=loose) or "-"
    columns: list[tuple[str, Sequence[str]]] = [
        ("NAME", roster.names),
        ("STATE", roster.states),
        ("AGENT", [agent or "-" for agent in roster.agents]),
        ("PANE", [pane or "-" for pane in roster.panes]),
        ("PID", [str(pid or "-") for pid in roster.pids]),
        ("AGE", [_age(age) for age in roster.ages]),
        ("UNREAD", unread),
        ("LINKS", links),
        ("TODAY", costs),
        ("CWD", [cwd or "-" for cwd in roster.cwds]),
    ]
    if branches is not None:  # someone works in a worktree: its branch, ahead/behind, dirty
        columns.insert(3, ("BRANCH", branches))
    if len(set(roster.hosts)) > 1:  # a room across machines: say where
        columns.insert(3, ("HOST", [host or "-" for host in roster.hosts]))
    cells = [_printable_cells([title, *column]) for title, column in columns]
    widths = [max(map(len, column)) for column in cells[:-1]]
    line = "  ".join(f"%-{width}s" for width in widths) + "  %s"
    return "\n".join([line % row for row in zip(*cells, strict=True)]) + "\n"


def _cost(roster: Roster, name: str) -> str:
    """What the agent spent today (``?`` for a model without a price), and whether a
    spent budget holds its prompts."""
    from agent_room.core.usage import money

    spent, known = roster.costs.get(name, (0.0, True))
    text = money(spent, known=known) if name in roster.costs else "-"
    return f"{text} (over budget)" if roster.over_budget(name) else text


def _printable_cells(cells: list[str]) -> list[str]:
    """A column's cells, each on one line and shown, not acted on (``printable``): one
    check of the whole column, and one per cell only where something is to escape."""
    if "".join(cells).isprintable():
        return cells
    return [printable(cell) for cell in cells]


def cmd_tree(*, as_json: bool) -> int:
    from agent_room.cli.outside import outside_rows
    from agent_room.core.tree import render_tree
    from agent_room.room.native import outside_nodes
    from agent_room.room.roster import session_tree
    from agent_room.store.views import live_worktrees

    room = _open()
    _registry(room)  # the sessions that ended unseen are marked first
    roots = session_tree(room) + outside_nodes(outside_rows(room))
    if live_worktrees(room.store):
        from agent_room.cli.worktrees import mark_branches

        mark_branches(room, roots)
    if as_json:
        print_json([root.as_dict() for root in roots])
    elif roots:
        sys.stdout.write(printable(render_tree(roots), multiline=True))
    else:
        print("nobody is in the room", file=sys.stderr)
    return 0


def cmd_approve(*, id: int) -> int:
    from agent_room.cli.worktrees import approve

    approve(_open(), id)
    print(f"handover #{id} approved", file=sys.stderr)
    return 0


def cmd_reject(*, id: int, reason: str) -> int:
    _open().reject(id, reason)
    print(f"handover #{id} rejected", file=sys.stderr)
    return 0


def _handover_json(row: dict[str, Any]) -> dict[str, Any]:
    """A pending handover as ``handovers --json`` prints it: its fields an object, not a
    JSON string inside JSON, and its times ISO strings as ``history``'s timestamps are."""
    import json

    from agent_room.turn.core.format import iso_timestamp

    out = dict(row)
    if isinstance(out.get("fields"), str):
        out["fields"] = json.loads(out["fields"])
    for key in ("requested_at", "decided_at"):
        if out.get(key) is not None:
            out[key] = iso_timestamp(out[key])
    return out


def cmd_handovers(*, as_json: bool) -> int:
    from agent_room.store import memory
    from agent_room.turn.core.cycles import render_cycle

    room = _open()
    rows = room.pending_handovers()
    cycles = room.handover_cycles(rows)
    contexts = memory.contexts(room.store, [int(r["message_id"]) for r in rows])
    for row in rows:
        cycle = cycles.get(int(row["message_id"]))
        row["cycle"] = list(cycle) if cycle else None
        row["cycle_text"] = render_cycle(cycle) if cycle else None
        row["context"] = contexts.get(int(row["message_id"]))  # what the console previews
    from agent_room.cli.worktrees import previews

    code = previews(room, rows)
    if as_json:
        print_json([{**_handover_json(row), "code": code[row["message_id"]]} for row in rows])
        return 0
    for row in rows:
        badge = f"  ⚠ closes a cycle: {row['cycle_text']}" if row["cycle"] else ""
        print(f"#{row['message_id']}  @{row['sender']} -> @{row['recipient']}{badge}")
        if row["context"]:
            lines = len(row["context"].splitlines())
            print(f"    context: {lines} lines (agent-room handovers show {row['message_id']})")
        preview = code[row["message_id"]]
        if preview:
            print(f"    {printable(str(preview['summary']))}")
    if not rows:
        print("no handovers waiting", file=sys.stderr)
    return 0
