"""The plain text forms the room prints: seed 004's message format and timestamps.

Standard library only: ``inbox`` and ``history`` print through here and must start fast.
Rows are plain mappings with the columns of the ``messages`` table.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    Row = Mapping[str, Any]
    """A message row as the store returns it: column name to value."""


def iso_timestamp(epoch: float) -> str:
    """Format a Unix time as an ISO 8601 UTC timestamp with milliseconds."""
    from datetime import UTC, datetime  # only when a message is printed: not every hook's

    moment = datetime.fromtimestamp(epoch, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def format_message(row: Row) -> str:
    """One message in seed 004's format: ``from:``/``to:``/``timestamp:``/``---``/body.

    The room adds ``id:`` (the number to approve, reject or quote) and, for anything but
    plain chat, ``kind:`` with the handover's state or the delivery failure.
    """
    lines = [
        f"from: {row['sender']}",
        f"to: {row['recipient']}",
        f"timestamp: {iso_timestamp(row['created_at'])}",
        f"id: {row['id']}",
    ]
    if row["kind"] != "chat":
        kind = str(row["kind"])
        if row.get("handover_state"):
            kind += f" ({row['handover_state']})"
        lines.append(f"kind: {kind}")
    if row.get("status") == "failed":
        lines.append(f"delivery: failed ({row.get('failure') or 'no receipt'})")
    elif row.get("status") == "held" and row.get("failure"):
        lines.append(f"delivery: held ({row['failure']})")  # by the loop breaker
    body = str(row["body"])
    return "\n".join(lines) + "\n---\n" + body + ("" if body.endswith("\n") else "\n")


def format_messages(rows: Iterable[Row]) -> str:
    """Several messages, one blank line between them."""
    return "\n".join(format_message(row) for row in rows)


VIA = {"nudge": "tmux", "native": "socket", "stop": "Stop hook", "hook": "hook"}
"""How a message was delivered (``messages.via``), in the words the room prints: typed
into its pane, through Claude Code's messaging socket, at a turn boundary, at start."""


def format_terminal(row: Row) -> str:
    """``format_message`` for a terminal: each header escaped to its one line, the body
    escaped but for its newlines and tabs (``core.printable``). The model is handed the
    exact text (``format_messages``); only what is printed is escaped."""
    from agent_room.turn.core.printable import printable  # not on the send path: it loads re

    shown = {k: printable(v) if isinstance(v, str) else v for k, v in row.items()}
    shown["body"] = printable(str(row["body"]), multiline=True)
    text = format_message(shown)
    via = row.get("via")
    if via and row.get("status") in ("delivered", "read"):  # how, for the operator only
        head, sep, rest = text.partition("\n---\n")
        text = f"{head}\ndelivery: via {printable(VIA.get(str(via), str(via)))}{sep}{rest}"
    return text


def format_terminal_messages(rows: Iterable[Row]) -> str:
    """Several messages for a terminal, one blank line between them."""
    return "\n".join(format_terminal(row) for row in rows)


def json_row(row: Row) -> dict[str, Any]:
    """A message row as the JSON object ``--json`` prints, with an ISO timestamp."""
    out = dict(row)
    out["timestamp"] = iso_timestamp(row["created_at"])
    return out
